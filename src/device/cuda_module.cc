#include "device/cuda_module.h"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "base/check.h"

namespace spccl::device {

namespace {

bool resolveModule(void* library, CudaModuleDriver* d) {
  return resolveDriverSymbol(library, &d->moduleLoadData, "cuModuleLoadData") &&
         resolveDriverSymbol(library, &d->moduleGetFunction, "cuModuleGetFunction") &&
         resolveDriverSymbol(library, &d->launchKernel, "cuLaunchKernel");
}

// Loaded modules and looked-up functions, for every EmbeddedModule: keyed
// by (image, context) and (image, context, name).
struct Loaded {
  std::mutex mutex;
  std::map<std::pair<const void*, CuContext>, CuModule> modules;
  std::map<std::pair<std::pair<const void*, CuContext>, std::string>, CuFunction> functions;
};

Loaded& loaded() {
  static auto* l = new Loaded();  // never destroyed: modules live as long as the process
  return *l;
}

}  // namespace

const CudaModuleDriver* cudaModuleDriver() {
  static std::atomic<const CudaModuleDriver*> loaded{nullptr};
  if (cudaDriver() == nullptr) return nullptr;
  return lookUpDriverTable(loaded, resolveModule);
}

spcclResult_t EmbeddedModule::function(const std::string& name, CuFunction* out) const {
  const CudaModuleDriver* m = cudaModuleDriver();
  if (!present() || m == nullptr)
    return SPCCL_FAIL(spcclSystemError, "kernel %s: %s", name.c_str(),
                      present() ? "the CUDA driver has no cuModuleLoadData/cuLaunchKernel"
                                : "this libspccl was built without CUDA (no kernels embedded)");
  CuContext context = nullptr;
  if (cudaDriver()->ctxGetCurrent(&context) != 0 || context == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "kernel %s: no CUDA context is current", name.c_str());
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mutex);
  const auto key = std::make_pair(static_cast<const void*>(image_), context);
  if (auto f = l.functions.find({key, name}); f != l.functions.end()) {
    *out = f->second;
    return spcclSuccess;
  }
  auto it = l.modules.find(key);
  if (it == l.modules.end()) {
    CuModule module = nullptr;
    const CuResult result = m->moduleLoadData(&module, image_);
    if (result != 0)
      return SPCCL_FAIL(spcclSystemError, "loading spccl's kernels (%zu bytes of fatbin): %s",
                        bytes_, describeCuError("cuModuleLoadData", result).c_str());
    it = l.modules.emplace(key, module).first;
  }
  CuFunction function = nullptr;
  const CuResult result = m->moduleGetFunction(&function, it->second, name.c_str());
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "kernel %s: %s", name.c_str(),
                      describeCuError("cuModuleGetFunction", result).c_str());
  l.functions.emplace(std::make_pair(key, name), function);
  *out = function;
  return spcclSuccess;
}

}  // namespace spccl::device

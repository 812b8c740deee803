#include "memory_kind.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace spccl::nccl {

namespace {

// The few driver entry points used here, by their unversioned names.
struct Driver {
  CUresult (*pointerGetAttribute)(void* data, CUpointer_attribute attribute,
                                  CUdeviceptr ptr) = nullptr;
  CUresult (*streamSynchronize)(CUstream stream) = nullptr;
  CUresult (*ctxGetDevice)(CUdevice* device) = nullptr;
  CUresult (*getErrorString)(CUresult error, const char** text) = nullptr;
};

// The driver once the process has loaded it; nullptr before. It is looked
// for again at every call until found (a dlopen with RTLD_NOLOAD: no file
// is opened), and kept loaded from then on.
const Driver* driver() {
  static std::atomic<const Driver*> loaded{nullptr};
  static std::mutex mutex;
  const Driver* d = loaded.load(std::memory_order_acquire);
  if (d != nullptr) return d;
  std::lock_guard<std::mutex> lock(mutex);
  d = loaded.load(std::memory_order_relaxed);
  if (d != nullptr) return d;
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  static Driver functions;
  functions.pointerGetAttribute = reinterpret_cast<decltype(functions.pointerGetAttribute)>(
      dlsym(handle, "cuPointerGetAttribute"));
  functions.streamSynchronize =
      reinterpret_cast<decltype(functions.streamSynchronize)>(dlsym(handle, "cuStreamSynchronize"));
  functions.ctxGetDevice =
      reinterpret_cast<decltype(functions.ctxGetDevice)>(dlsym(handle, "cuCtxGetDevice"));
  functions.getErrorString =
      reinterpret_cast<decltype(functions.getErrorString)>(dlsym(handle, "cuGetErrorString"));
  loaded.store(&functions, std::memory_order_release);
  return &functions;
}

}  // namespace

MemoryKind memoryKindOf(const void* buffer) {
  const Driver* d = driver();
  if (d == nullptr || d->pointerGetAttribute == nullptr || buffer == nullptr)
    return MemoryKind::Host;
  unsigned int type = 0;
  // Memory the driver does not know (plain malloc) fails the query: host.
  if (d->pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                             reinterpret_cast<CUdeviceptr>(buffer)) != CUDA_SUCCESS ||
      type != CU_MEMORYTYPE_DEVICE)
    return MemoryKind::Host;
  unsigned int managed = 0;
  if (d->pointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                             reinterpret_cast<CUdeviceptr>(buffer)) == CUDA_SUCCESS &&
      managed != 0)
    return MemoryKind::Host;
  return MemoryKind::Device;
}

bool finishStreamWork(cudaStream_t stream, std::string* error) {
  if (stream == nullptr) return true;
  const Driver* d = driver();
  if (d == nullptr || d->streamSynchronize == nullptr) return true;
  const CUresult result = d->streamSynchronize(reinterpret_cast<CUstream>(stream));
  if (result == CUDA_SUCCESS) return true;
  const char* text = nullptr;
  if (d->getErrorString == nullptr || d->getErrorString(result, &text) != CUDA_SUCCESS)
    text = "unknown";
  *error = "cuStreamSynchronize failed: " + std::string(text) + " (CUresult " +
           std::to_string(static_cast<int>(result)) + ")";
  return false;
}

int currentCudaDevice() {
  const Driver* d = driver();
  CUdevice device = -1;
  if (d == nullptr || d->ctxGetDevice == nullptr || d->ctxGetDevice(&device) != CUDA_SUCCESS)
    return -1;
  return static_cast<int>(device);
}

}  // namespace spccl::nccl

#include "device/cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace spccl::device {

namespace {

// Entry points by their ABI names: the _v2 copies take 64-bit device
// pointers, the _v2 context stack calls are the current ones.
template <typename Fn>
bool resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  return *fn != nullptr;
}

bool resolveAll(void* library, CudaDriver* d) {
  return resolve(library, "cuPointerGetAttributes", &d->pointerGetAttributes) &&
         resolve(library, "cuMemcpyDtoH_v2", &d->memcpyDtoH) &&
         resolve(library, "cuMemcpyHtoD_v2", &d->memcpyHtoD) &&
         resolve(library, "cuMemcpyDtoHAsync_v2", &d->memcpyDtoHAsync) &&
         resolve(library, "cuMemcpyHtoDAsync_v2", &d->memcpyHtoDAsync) &&
         resolve(library, "cuMemHostAlloc", &d->memHostAlloc) &&
         resolve(library, "cuMemFreeHost", &d->memFreeHost) &&
         resolve(library, "cuLaunchHostFunc", &d->launchHostFunc) &&
         resolve(library, "cuStreamSynchronize", &d->streamSynchronize) &&
         resolve(library, "cuStreamGetCtx", &d->streamGetCtx) &&
         resolve(library, "cuCtxGetCurrent", &d->ctxGetCurrent) &&
         resolve(library, "cuCtxPushCurrent_v2", &d->ctxPushCurrent) &&
         resolve(library, "cuCtxPopCurrent_v2", &d->ctxPopCurrent) &&
         resolve(library, "cuCtxGetDevice", &d->ctxGetDevice) &&
         resolve(library, "cuGetErrorName", &d->getErrorName) &&
         resolve(library, "cuGetErrorString", &d->getErrorString) &&
         resolve(library, "cuMemcpyAsync", &d->memcpyAsync) &&
         resolve(library, "cuMemAlloc_v2", &d->memAlloc) &&
         resolve(library, "cuMemFree_v2", &d->memFree) &&
         resolve(library, "cuCtxSetCurrent", &d->ctxSetCurrent);
}

}  // namespace

namespace {
std::atomic<const CudaDriver*> gLoaded{nullptr};
}  // namespace

const CudaDriver* cudaDriverFoundSoFar() { return gLoaded.load(std::memory_order_acquire); }

const CudaDriver* cudaDriver() {
  std::atomic<const CudaDriver*>& loaded = gLoaded;
  static std::mutex mutex;
  const CudaDriver* d = loaded.load(std::memory_order_acquire);
  if (d != nullptr) return d;
  std::lock_guard<std::mutex> lock(mutex);
  d = loaded.load(std::memory_order_relaxed);
  if (d != nullptr) return d;
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  static CudaDriver functions;
  if (!resolveAll(library, &functions)) return nullptr;  // a driver older than CUDA 10
  loaded.store(&functions, std::memory_order_release);
  return &functions;
}

std::string describeCuError(const char* what, CuResult result) {
  const CudaDriver* d = cudaDriver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d == nullptr || d->getErrorName(result, &name) != 0) name = "CUDA error";
  if (d == nullptr || d->getErrorString(result, &text) != 0) text = "unknown";
  return std::string(what) + " failed: " + name + " (" + text + ", CUresult " +
         std::to_string(result) + ")";
}

int currentCudaDevice() {
  const CudaDriver* d = cudaDriver();
  if (d == nullptr) return -1;
  CuContext context = nullptr;
  if (d->ctxGetCurrent(&context) != 0 || context == nullptr) return -1;
  int device = -1;
  return d->ctxGetDevice(&device) == 0 ? device : -1;
}

ScopedCudaContext::ScopedCudaContext(CuContext context) {
  const CudaDriver* d = cudaDriver();
  if (d == nullptr || context == nullptr) return;
  CuContext current = nullptr;
  if (d->ctxGetCurrent(&current) == 0 && current == context) return;
  pushed_ = d->ctxPushCurrent(context) == 0;
}

ScopedCudaContext::~ScopedCudaContext() {
  if (!pushed_) return;
  CuContext popped = nullptr;
  cudaDriver()->ctxPopCurrent(&popped);
}

}  // namespace spccl::device

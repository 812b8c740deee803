#include "device/cuda_driver.h"

#include <atomic>

namespace spccl::device {

namespace {

bool resolveAll(void* library, CudaDriver* d) {
  return resolveDriverSymbol(library, &d->pointerGetAttributes, "cuPointerGetAttributes") &&
         resolveDriverSymbol(library, &d->memcpyDtoH, "cuMemcpyDtoH_v2") &&
         resolveDriverSymbol(library, &d->memcpyHtoD, "cuMemcpyHtoD_v2") &&
         resolveDriverSymbol(library, &d->memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2") &&
         resolveDriverSymbol(library, &d->memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") &&
         resolveDriverSymbol(library, &d->memHostAlloc, "cuMemHostAlloc") &&
         resolveDriverSymbol(library, &d->memFreeHost, "cuMemFreeHost") &&
         resolveDriverSymbol(library, &d->launchHostFunc, "cuLaunchHostFunc") &&
         resolveDriverSymbol(library, &d->streamSynchronize, "cuStreamSynchronize") &&
         resolveDriverSymbol(library, &d->streamGetCtx, "cuStreamGetCtx") &&
         resolveDriverSymbol(library, &d->ctxGetCurrent, "cuCtxGetCurrent") &&
         resolveDriverSymbol(library, &d->ctxPushCurrent, "cuCtxPushCurrent_v2") &&
         resolveDriverSymbol(library, &d->ctxPopCurrent, "cuCtxPopCurrent_v2") &&
         resolveDriverSymbol(library, &d->ctxGetDevice, "cuCtxGetDevice") &&
         resolveDriverSymbol(library, &d->getErrorName, "cuGetErrorName") &&
         resolveDriverSymbol(library, &d->getErrorString, "cuGetErrorString") &&
         resolveDriverSymbol(library, &d->memcpyAsync, "cuMemcpyAsync") &&
         resolveDriverSymbol(library, &d->memAlloc, "cuMemAlloc_v2") &&
         resolveDriverSymbol(library, &d->memFree, "cuMemFree_v2") &&
         resolveDriverSymbol(library, &d->ctxSetCurrent, "cuCtxSetCurrent");
}

}  // namespace

namespace {
std::atomic<const CudaDriver*> gLoaded{nullptr};
}  // namespace

const CudaDriver* cudaDriverFoundSoFar() { return gLoaded.load(std::memory_order_acquire); }

const CudaDriver* cudaDriver() {
  return lookUpDriverTable(gLoaded, resolveAll);  // nullptr: a driver older than CUDA 10
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

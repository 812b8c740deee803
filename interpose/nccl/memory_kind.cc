#include "memory_kind.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
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
  CUresult (*ctxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*memcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          CUstream stream) = nullptr;
  CUresult (*memAlloc)(CUdeviceptr* ptr, size_t bytes) = nullptr;
  CUresult (*memFree)(CUdeviceptr ptr) = nullptr;
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
  functions.ctxGetCurrent =
      reinterpret_cast<decltype(functions.ctxGetCurrent)>(dlsym(handle, "cuCtxGetCurrent"));
  functions.ctxSetCurrent =
      reinterpret_cast<decltype(functions.ctxSetCurrent)>(dlsym(handle, "cuCtxSetCurrent"));
  functions.memcpyAsync =
      reinterpret_cast<decltype(functions.memcpyAsync)>(dlsym(handle, "cuMemcpyAsync"));
  // The _v2 entry points are the 64-bit ones cuda.h maps cuMemAlloc to.
  functions.memAlloc =
      reinterpret_cast<decltype(functions.memAlloc)>(dlsym(handle, "cuMemAlloc_v2"));
  functions.memFree = reinterpret_cast<decltype(functions.memFree)>(dlsym(handle, "cuMemFree_v2"));
  loaded.store(&functions, std::memory_order_release);
  return &functions;
}

std::string driverError(const Driver* d, const char* call, CUresult result) {
  const char* text = nullptr;
  if (d->getErrorString == nullptr || d->getErrorString(result, &text) != CUDA_SUCCESS)
    text = "unknown";
  return std::string(call) + " failed: " + text + " (CUresult " +
         std::to_string(static_cast<int>(result)) + ")";
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
  *error = driverError(d, "cuStreamSynchronize", result);
  return false;
}

int currentCudaDevice() {
  const Driver* d = driver();
  CUdevice device = -1;
  if (d == nullptr || d->ctxGetDevice == nullptr || d->ctxGetDevice(&device) != CUDA_SUCCESS)
    return -1;
  return static_cast<int>(device);
}

void* currentCudaContext() {
  const Driver* d = driver();
  CUcontext context = nullptr;
  if (d == nullptr || d->ctxGetCurrent == nullptr || d->ctxGetCurrent(&context) != CUDA_SUCCESS)
    return nullptr;
  return static_cast<void*>(context);
}

void makeCudaContextCurrent(void* context) {
  if (context == nullptr) return;
  const Driver* d = driver();
  if (d != nullptr && d->ctxSetCurrent != nullptr)
    (void)d->ctxSetCurrent(static_cast<CUcontext>(context));
}

bool copyOnStream(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                  std::string* error) {
  if (bytes == 0 || dst == src) return true;
  const Driver* d = driver();
  const bool device =
      memoryKindOf(dst) == MemoryKind::Device || memoryKindOf(src) == MemoryKind::Device;
  if (d == nullptr || d->memcpyAsync == nullptr || (!device && stream == nullptr)) {
    std::memmove(dst, src, bytes);
    return true;
  }
  const CUresult result =
      d->memcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes,
                     reinterpret_cast<CUstream>(stream));
  if (result == CUDA_SUCCESS) return true;
  *error = driverError(d, "cuMemcpyAsync", result);
  return false;
}

bool allocateDeviceMemory(void** ptr, size_t bytes, std::string* error) {
  const Driver* d = driver();
  if (d == nullptr || d->memAlloc == nullptr || currentCudaContext() == nullptr) {
    *error = "no current CUDA context";
    return false;
  }
  CUdeviceptr memory = 0;
  const CUresult result = d->memAlloc(&memory, bytes > 0 ? bytes : 1);
  if (result != CUDA_SUCCESS) {
    *error = driverError(d, "cuMemAlloc", result);
    return false;
  }
  // A device address is an integer in the driver's API.
  *ptr = reinterpret_cast<void*>(memory);  // NOLINT(performance-no-int-to-ptr): driver address
  return true;
}

bool freeDeviceMemory(void* ptr, std::string* error) {
  const Driver* d = driver();
  if (d == nullptr || d->memFree == nullptr) {
    *error = "the CUDA driver is not loaded";
    return false;
  }
  const CUresult result = d->memFree(reinterpret_cast<CUdeviceptr>(ptr));
  if (result == CUDA_SUCCESS) return true;
  *error = driverError(d, "cuMemFree", result);
  return false;
}

}  // namespace spccl::nccl

// The interposer's CUDA needs, on spccl's run-time driver lookup
// (src/device/cuda_driver.h): one table of entry points for the library
// and the interposer.
#include "memory_kind.h"

#include <cstring>

#include "device/cuda_driver.h"
#include "device/memory_kind.h"

namespace spccl::nccl {

namespace {

using device::CuContext;
using device::cudaDriver;
using device::CuDevicePtr;
using device::CuStream;
using device::describeCuError;

CuDevicePtr address(const void* pointer) { return reinterpret_cast<CuDevicePtr>(pointer); }

}  // namespace

MemoryKind memoryKindOf(const void* buffer) {
  return device::locateBuffer(buffer).kind == device::MemoryKind::Device ? MemoryKind::Device
                                                                         : MemoryKind::Host;
}

bool finishStreamWork(cudaStream_t stream, std::string* error) {
  const device::CudaDriver* d = cudaDriver();
  if (stream == nullptr || d == nullptr) return true;
  const device::CuResult result = d->streamSynchronize(static_cast<CuStream>(stream));
  if (result == 0) return true;
  *error = describeCuError("cuStreamSynchronize", result);
  return false;
}

int currentCudaDevice() { return device::currentCudaDevice(); }

void* currentCudaContext() {
  const device::CudaDriver* d = cudaDriver();
  CuContext context = nullptr;
  if (d == nullptr || d->ctxGetCurrent(&context) != 0) return nullptr;
  return context;
}

void makeCudaContextCurrent(void* context) {
  const device::CudaDriver* d = cudaDriver();
  if (context != nullptr && d != nullptr) static_cast<void>(d->ctxSetCurrent(context));
}

bool copyOnStream(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                  std::string* error) {
  if (bytes == 0 || dst == src) return true;
  const device::CudaDriver* d = cudaDriver();
  const bool deviceMemory =
      memoryKindOf(dst) == MemoryKind::Device || memoryKindOf(src) == MemoryKind::Device;
  if (d == nullptr || (!deviceMemory && stream == nullptr)) {
    std::memmove(dst, src, bytes);
    return true;
  }
  const device::CuResult result =
      d->memcpyAsync(address(dst), address(src), bytes, static_cast<CuStream>(stream));
  if (result == 0) return true;
  *error = describeCuError("cuMemcpyAsync", result);
  return false;
}

bool allocateDeviceMemory(void** ptr, size_t bytes, std::string* error) {
  const device::CudaDriver* d = cudaDriver();
  if (d == nullptr || currentCudaContext() == nullptr) {
    *error = "no current CUDA context";
    return false;
  }
  CuDevicePtr memory = 0;
  const device::CuResult result = d->memAlloc(&memory, bytes > 0 ? bytes : 1);
  if (result != 0) {
    *error = describeCuError("cuMemAlloc", result);
    return false;
  }
  // A device address is an integer in the driver's API.
  *ptr = reinterpret_cast<void*>(memory);  // NOLINT(performance-no-int-to-ptr): driver address
  return true;
}

bool freeDeviceMemory(void* ptr, std::string* error) {
  const device::CudaDriver* d = cudaDriver();
  if (d == nullptr) {
    *error = "the CUDA driver is not loaded";
    return false;
  }
  const device::CuResult result = d->memFree(address(ptr));
  if (result == 0) return true;
  *error = describeCuError("cuMemFree", result);
  return false;
}

}  // namespace spccl::nccl

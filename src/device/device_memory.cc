#include "device/device_memory.h"

#include <map>
#include <mutex>

#include "base/check.h"
#include "device/cuda_ipc.h"

namespace spccl::device {

namespace {

bool resolveStreamMemory(void* library, StreamMemoryDriver* d) {
  return resolveDriverSymbol(library, &d->memAllocAsync, "cuMemAllocAsync") &&
         resolveDriverSymbol(library, &d->memFreeAsync, "cuMemFreeAsync");
}

}  // namespace

const StreamMemoryDriver* streamMemoryDriver() {
  static std::atomic<const StreamMemoryDriver*> loaded{nullptr};
  if (cudaDriver() == nullptr) return nullptr;
  return lookUpDriverTable(loaded, resolveStreamMemory);
}

StreamMemory::~StreamMemory() { release(); }

void StreamMemory::release() {
  if (address_ != 0) streamMemoryDriver()->memFreeAsync(address_, stream_);
  address_ = 0;
  bytes_ = 0;
}

spcclResult_t StreamMemory::reserve(size_t bytes, const char* what) {
  if (bytes <= bytes_ && address_ != 0) return spcclSuccess;
  release();
  const StreamMemoryDriver* d = streamMemoryDriver();
  if (d == nullptr)
    return SPCCL_FAIL(spcclSystemError, "%s: the CUDA driver has no cuMemAllocAsync", what);
  const CuResult result = d->memAllocAsync(&address_, bytes > 0 ? bytes : 1, stream_);
  if (result != 0) {
    address_ = 0;
    return SPCCL_FAIL(spcclSystemError, "%s: %zu bytes of device memory: %s", what, bytes,
                      describeCuError("cuMemAllocAsync", result).c_str());
  }
  bytes_ = bytes;
  return spcclSuccess;
}

spcclResult_t ownStream(const char* call, CuStream* out) {
  constexpr unsigned kNonBlockingStream = 1;  // CU_STREAM_NON_BLOCKING
  static std::mutex mutex;
  static auto* streams = new std::map<CuContext, CuStream>();  // never destroyed, like modules
  CuContext context = nullptr;
  if (cudaDriver()->ctxGetCurrent(&context) != 0 || context == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "%s: no CUDA context is current", call);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = streams->find(context); it != streams->end()) {
    *out = it->second;
    return spcclSuccess;
  }
  const CudaIpcDriver* ipc = cudaIpcDriver();
  if (ipc == nullptr)
    return SPCCL_FAIL(spcclSystemError, "%s: the CUDA driver has no cuStreamCreate", call);
  CuStream stream = nullptr;
  const CuResult created = ipc->streamCreate(&stream, kNonBlockingStream);
  if (created != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: a stream of spccl's own: %s", call,
                      describeCuError("cuStreamCreate", created).c_str());
  streams->emplace(context, stream);
  *out = stream;
  return spcclSuccess;
}

}  // namespace spccl::device

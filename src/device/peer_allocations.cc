#include "device/peer_allocations.h"

#include <cstring>
#include <string>

#include "base/check.h"

namespace spccl::device {

namespace {
constexpr unsigned int kNonBlockingStream = 1;  // CU_STREAM_NON_BLOCKING
}  // namespace

PeerAllocations::~PeerAllocations() {
  if (context_ == nullptr) return;
  ScopedCudaContext current(context_);
  opened_.clear();  // closed in their context
  scratch_.release();
  if (stream_ != nullptr) cudaIpcDriver()->streamDestroy(stream_);
}

spcclResult_t PeerAllocations::bindContext(const char* call) {
  CuContext current = nullptr;
  if (cudaDriver()->ctxGetCurrent(&current) != 0 || current == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "%s: no CUDA context is current", call);
  if (context_ == nullptr) {
    context_ = current;
    location_ = currentDeviceLocation();
  }
  if (current != context_)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: device buffers of another CUDA context than this communicator's "
                      "earlier device calls (one communicator, one device)",
                      call);
  return spcclSuccess;
}

spcclResult_t PeerAllocations::open(int rank, const CudaIpcHandle& handle, CuDevicePtr* base) {
  Key key{rank, {}};
  std::memcpy(key.second.data(), handle.bytes, sizeof(handle.bytes));
  auto it = opened_.find(key);
  if (it == opened_.end()) {
    if (opened_.size() >= kMaxOpened) opened_.clear();
    PeerDeviceMemory memory;
    SPCCL_CHECK(memory.open(handle, ("rank " + std::to_string(rank)).c_str()));
    it = opened_.emplace(key, std::move(memory)).first;
  }
  *base = it->second.base();
  return spcclSuccess;
}

spcclResult_t PeerAllocations::stream(CuStream* out) {
  if (stream_ == nullptr) {
    const CuResult created = cudaIpcDriver()->streamCreate(&stream_, kNonBlockingStream);
    if (created != 0) {
      stream_ = nullptr;
      return SPCCL_FAIL(spcclSystemError, "a stream for device-resident calls: %s",
                        describeCuError("cuStreamCreate", created).c_str());
    }
  }
  *out = stream_;
  return spcclSuccess;
}

}  // namespace spccl::device

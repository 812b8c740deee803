#include "device/peer_allocations.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/knobs.h"

namespace spccl::device {

namespace {
constexpr unsigned int kNonBlockingStream = 1;  // CU_STREAM_NON_BLOCKING

size_t maxOpenedOf(size_t asked) {
  if (asked > 0) return asked;
  const int64_t knob = knobInt("SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS");
  return static_cast<size_t>(std::max<int64_t>(knob, 1));
}
}  // namespace

PeerAllocations::PeerAllocations(size_t maxOpened) : maxOpened_(maxOpenedOf(maxOpened)) {}

PeerAllocations::~PeerAllocations() {
  if (context_ == nullptr) return;
  ScopedCudaContext current(context_);
  // Closed in their context, after spccl's work that may still use them.
  if (stream_ != nullptr) (void)cudaDriver()->streamSynchronize(stream_);
  retiring_.closeAll(nullptr);
  opened_.clear();
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
    if (opened_.size() >= maxOpened_) (void)evictOne();
    Opened entry;
    SPCCL_CHECK(entry.memory.open(handle, ("rank " + std::to_string(rank)).c_str()));
    it = opened_.emplace(key, std::move(entry)).first;
  }
  it->second.lastUse = ++uses_;
  it->second.call = calls_;
  *base = it->second.memory.base();
  return spcclSuccess;
}

bool PeerAllocations::evictOne() {
  auto victim = opened_.end();
  for (auto it = opened_.begin(); it != opened_.end(); ++it) {
    const bool usedNow = callRunning_ && it->second.call == calls_;
    if (!usedNow && (victim == opened_.end() || it->second.lastUse < victim->second.lastUse))
      victim = it;
  }
  if (victim == opened_.end()) return false;
  // Earlier calls' kernels and copies ran on stream_ only (none touches a
  // peer's allocation on the caller's stream): an event there covers them.
  retiring_.retire(std::move(victim->second.memory), stream_);
  opened_.erase(victim);
  return true;
}

void PeerAllocations::evictBeyondBound() {
  while (opened_.size() > maxOpened_ && evictOne()) {
  }
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

PeerAllocations::OneCall::OneCall(PeerAllocations& peers) : peers_(peers) {
  peers_.retiring_.closeFinished();
  ++peers_.calls_;
  peers_.callRunning_ = true;
}

PeerAllocations::OneCall::~OneCall() {
  peers_.callRunning_ = false;
  peers_.evictBeyondBound();
  peers_.retiring_.closeFinished();
}

}  // namespace spccl::device

// SPCCL_STAGING_REPORT=1: where a communicator's calls on device memory
// spend their time when staged whole through pinned host memory
// (docs/gpu.md, "How it runs"): the copies in, the call on the host (the
// CPU's reductions and the transports), the copies out. Printed by each
// rank when the communicator ends. On a stream the copies in count from
// the enqueue to the stream reaching the call, so they include the work
// queued before it: split calls that are synchronised one by one (the
// perf binaries). Calls cut into pieces overlap the parts, so they are
// counted, not split.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/frame.h"

namespace spccl {

class StagingProfile {
 public:
  // One whole-staged call: its three parts' seconds and bytes copied.
  void recordSplit(double copyInSeconds, double runSeconds, double copyOutSeconds, size_t bytesIn,
                   size_t bytesOut);
  // One call cut into pieces (its copies overlap the transfers).
  void recordOverlapped();
  // One collective of `type` that ran device-resident
  // (core/device_collective_call.h): nothing staged.
  void recordDeviceResident(CollType type);
  // One sparse all-reduce whose non-zeros were extracted and scattered on
  // the device (core/device_sparse_call.h), with the bytes it copied
  // between device and host.
  void recordDeviceSparse(size_t bytesIn, size_t bytesOut);
  // One token top-k or mask all-reduce whose kept rows were gathered and
  // scattered on the device (core/device_token_call.h), with the bytes it
  // copied between device and host.
  void recordDeviceTokens(size_t bytesIn, size_t bytesOut);
  // One compressed all-reduce whose codecs ran on the device
  // (core/device_compressed_call.h), with the bytes it copied.
  void recordDeviceCodecs(size_t bytesIn, size_t bytesOut);

  // One line on stderr (with SPCCL_STAGING_REPORT=1), naming the rank;
  // nothing when no call was staged.
  void printIfAsked(int rank, int nranks) const;

 private:
  mutable std::mutex mutex_;
  uint64_t splitCalls_ = 0;
  uint64_t overlappedCalls_ = 0;
  std::array<uint64_t, static_cast<size_t>(CollType::kCount)> deviceResidentCalls_{};
  uint64_t deviceSparseCalls_ = 0;
  uint64_t deviceSparseBytesIn_ = 0;
  uint64_t deviceSparseBytesOut_ = 0;
  uint64_t deviceTokenCalls_ = 0;
  uint64_t deviceTokenBytesIn_ = 0;
  uint64_t deviceTokenBytesOut_ = 0;
  uint64_t deviceCodecCalls_ = 0;
  uint64_t deviceCodecBytesIn_ = 0;
  uint64_t deviceCodecBytesOut_ = 0;
  double copyInSeconds_ = 0;
  double runSeconds_ = 0;
  double copyOutSeconds_ = 0;
  uint64_t bytesIn_ = 0;
  uint64_t bytesOut_ = 0;
};

}  // namespace spccl

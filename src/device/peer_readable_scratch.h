// Device memory of a communicator's own that its peers read through CUDA
// IPC: where an in-place all-to-all(v) puts a copy of its send data, so
// that the peers read that copy while the rank overwrites its buffer
// (coll/device_all_to_all.h; docs/gpu.md, "Device-resident collectives").
//
// Allocated with cuMemAlloc: memory from a stream-ordered pool
// (cuMemAllocAsync, device_memory.h) has no legacy IPC handle. Kept and
// reused across calls, so that its handle repeats and the peers'
// opened-handle cache (peer_allocations.h) stays warm. Grown on demand, at
// least doubling; an outgrown allocation is not freed at once but when
// the communicator ends: cuMemFree waits for the whole device, and so for
// a caller's stream that the calling collective holds (core/staged_call.h),
// which would never let go. Doubling keeps what waits below the live size.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

class PeerReadableScratch {
 public:
  PeerReadableScratch() = default;
  ~PeerReadableScratch() { release(); }
  PeerReadableScratch(const PeerReadableScratch&) = delete;
  PeerReadableScratch& operator=(const PeerReadableScratch&) = delete;

  // At least `bytes` in the calling thread's current context: at least
  // doubled, or exactly `bytes` where the doubled size cannot be had;
  // spcclSystemError with the driver's error, naming `call`. cuMemAlloc
  // may wait for the device: called on the API caller's thread, before
  // the call holds its stream (core/device_collective_call.cc).
  spcclResult_t reserve(size_t bytes, const char* call, CuDevicePtr* out);
  // The scratch where reserve made it at least `bytes`, allocating
  // nothing (for the held body); false where it is smaller.
  bool take(size_t bytes, CuDevicePtr* out);
  // Frees every allocation; the caller makes their context current.
  void release();
  size_t bytes() const;

 private:
  // Reservers one at a time, held across cuMemAlloc: a second reserver
  // waits for the first's block instead of allocating one of its own that
  // would sit unused until release() (review). take() never locks it.
  std::mutex growing_;
  // The caller's thread reserves while an earlier call's body, queued on
  // another thread, may take. Never held across cuMemAlloc (reserve).
  mutable std::mutex mutex_;
  CuDevicePtr live_ = 0;
  size_t bytes_ = 0;
  std::vector<CuDevicePtr> outgrown_;
};

}  // namespace spccl::device

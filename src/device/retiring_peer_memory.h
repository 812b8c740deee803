// Peers' allocations that PeerAllocations (peer_allocations.h) evicted
// but that work queued on spccl's stream before the eviction may still
// read or write: each is closed (cuIpcCloseMemHandle unmaps it) only once
// an event recorded on that stream at its eviction has completed. Checked
// without blocking at later calls; at teardown, after the stream is
// synchronised. Only spccl's own stream is ever waited for, never a
// user's: the device-resident schedules put no work that touches a peer's
// allocation on the caller's stream (which a host function holds while
// the call runs), and a user's stream may wait on this very call.
#pragma once

#include <cstddef>
#include <vector>

#include "device/cuda_ipc.h"

namespace spccl::device {

class RetiringPeerMemory {
 public:
  RetiringPeerMemory() = default;
  ~RetiringPeerMemory() { closeAll(nullptr); }
  RetiringPeerMemory(const RetiringPeerMemory&) = delete;
  RetiringPeerMemory& operator=(const RetiringPeerMemory&) = delete;

  // Closes `memory` once what `stream` holds now has run; at once where
  // stream is null (nothing was ever queued). Where no event can be
  // recorded, waits for the stream first (spccl's own: its work only ends).
  void retire(PeerDeviceMemory memory, CuStream stream);
  // Closes those whose event has completed; never blocks.
  void closeFinished();
  // Waits for `stream` (null: none), then closes every one.
  void closeAll(CuStream stream);
  // Still mapped, waiting for their event.
  size_t pending() const { return retiring_.size(); }

 private:
  struct Retiring {
    PeerDeviceMemory memory;
    CuEvent event = nullptr;
  };
  static void destroyEvent(CuEvent event);
  std::vector<Retiring> retiring_;
};

}  // namespace spccl::device

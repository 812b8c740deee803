// The pipelined relay that ring and chain schedules share: slices arrive
// from one upstream peer, are optionally reduced, and are optionally passed
// on to one downstream peer, with the next receive always posted before
// the current one is waited on, so the link never idles between slices.
//
// Deadlock freedom: a rank only ever blocks while it has a receive posted
// for the next message its upstream peer will send, so the oldest send in
// flight on every link is always matched and completes. Sends are therefore
// posted without waiting for earlier ones: a rank that waited on its own
// sends would block with only its next receive posted, and a rendezvous
// transport (shm) completes a send only once the peer has received it.
// Memory is protected instead by release(), and the staging ring
// (kRelayStagingSlices) bounds how far a rank runs ahead.
// The one exception (arrivalsConflict) arises only when a single block
// carries data, so a single message is in flight around the ring.
#pragma once

#include <cstddef>
#include <deque>

#include "coll/relay_plan.h"
#include "coll/schedule_support.h"
#include "runtime/coll_context.h"

namespace spccl {

// Sends in flight, oldest first.
class SendWindow {
 public:
  explicit SendWindow(CollContext& ctx) : ctx_(ctx) {}
  spcclResult_t post(int peer, const void* data, size_t bytes);
  // Waits until no send in flight reads from [data, data + bytes), so the
  // region may be overwritten.
  spcclResult_t release(const void* data, size_t bytes);
  spcclResult_t drain();

 private:
  struct InFlight {
    PeerRequest request;
    const char* data = nullptr;
    size_t bytes = 0;
  };
  spcclResult_t waitOldest();

  CollContext& ctx_;
  std::deque<InFlight> inFlight_;
};

// Runs `plan`; upstream / downstream are -1 where the plan has none.
spcclResult_t runRelay(CollContext& ctx, RelayPlan& plan, int upstream, int downstream,
                       size_t elementSize, kernels::ReduceFn reduce, const char* schedule);

}  // namespace spccl

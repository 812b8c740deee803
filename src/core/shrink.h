// Shrinking a communicator (spcclCommShrink) without the excluded ranks:
// the lowest surviving rank (the leader) starts the new communicator's
// rendezvous and hands its id to the other survivors over the fault
// channel (core/fault_channel.h), never through the old communicator's
// engine or rendezvous root, so dead, stopped or live excluded ranks (the
// old rank 0 among them) take no part. The id carries no secret: each
// survivor derives it from the old communicator's (core/handshake.h).
#pragma once

#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl {

class FaultService;

struct ShrinkPlan {
  std::vector<int> survivors;  // old ranks, increasing
  int newRank = -1;
  int leader = -1;      // survivors[0]
  uint64_t digest = 0;  // of the excluded set: every survivor must pass the same
  uint64_t instance = 0;
};

// Checks excludeRanks (range, duplicates, this rank in it) and numbers the
// call. `what` names the call in errors.
spcclResult_t planShrink(FaultService& service, const int* excludeRanks, int nExclude,
                         ShrinkPlan* plan);
// The leader: sends `id` (its secret zeroed) to every other survivor.
spcclResult_t announceShrinkId(FaultService& service, const ShrinkPlan& plan,
                               const spcclUniqueId& id);
// The others: waits for the leader's id (two timeouts: the leader may be
// finishing an agreement).
spcclResult_t awaitShrinkId(FaultService& service, const ShrinkPlan& plan, spcclUniqueId* id);

}  // namespace spccl

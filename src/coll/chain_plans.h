// The pipelined chain schedules of one rank as relay plans (see
// chain_schedules.cc). The chain runs over relative ranks 0 (the root),
// 1, ..., n-1; broadcast flows away from the root, reduce towards it.
#pragma once

#include <cstddef>

#include "coll/partition.h"
#include "coll/relay_plan.h"

namespace spccl {

struct ChainPosition {
  int relative = 0;
  int towardsRoot = -1;   // absolute rank of relative - 1; -1 at the root
  int awayFromRoot = -1;  // absolute rank of relative + 1; -1 at the end of the chain
  bool isRoot() const { return relative == 0; }
  bool isLast() const { return awayFromRoot < 0; }
};

ChainPosition chainPosition(int rank, int root, int nranks);

// The root sends every slice of buffer; the others receive each slice
// into buffer and relay it.
class BroadcastChainPlan final : public RelayPlan {
 public:
  BroadcastChainPlan(const ChainPosition& position, char* buffer, size_t count, size_t sliceElems,
                     size_t elementSize);
  bool nextInitialSend(const void** data, size_t* count) override;
  bool nextArrival(RelayArrival* arrival) override;

 private:
  const ChainPosition position_;
  char* const buffer_;
  const size_t elementSize_;
  SliceCursor initial_;   // empty unless root
  SliceCursor arriving_;  // empty at the root
};

// The last rank sends its input; every other rank combines its input with
// the partial of the ranks beyond it as reduce(acc, own (lower relative
// rank), partial (higher)) and relays that; the root reduces into its
// output. landing holds 2 slices, staging kRelayStagingSlices slices
// (neither is used at the last rank, staging not at the root).
class ReduceChainPlan final : public RelayPlan {
 public:
  ReduceChainPlan(const ChainPosition& position, const char* input, char* rootOutput, char* landing,
                  char* staging, size_t count, size_t sliceElems, size_t elementSize);
  bool nextInitialSend(const void** data, size_t* count) override;
  bool nextArrival(RelayArrival* arrival) override;

 private:
  const ChainPosition position_;
  const char* const input_;
  char* const rootOutput_;
  char* const landing_;
  char* const staging_;
  const size_t sliceElems_;
  const size_t elementSize_;
  SliceCursor initial_;   // empty unless last
  SliceCursor arriving_;  // empty at the last rank
  size_t arrivals_ = 0;
};

}  // namespace spccl

#include "coll/chain_plans.h"

namespace spccl {

ChainPosition chainPosition(int rank, int root, int nranks) {
  ChainPosition position;
  position.relative = relativeRank(rank, root, nranks);
  if (position.relative > 0)
    position.towardsRoot = absoluteRank(position.relative - 1, root, nranks);
  if (position.relative < nranks - 1)
    position.awayFromRoot = absoluteRank(position.relative + 1, root, nranks);
  return position;
}

BroadcastChainPlan::BroadcastChainPlan(const ChainPosition& position, char* buffer, size_t count,
                                       size_t sliceElems, size_t elementSize)
    : position_(position), buffer_(buffer), elementSize_(elementSize) {
  const SliceCursor all{{0, count}, sliceElems};
  (position.isRoot() ? initial_ : arriving_) = all;
}

bool BroadcastChainPlan::nextInitialSend(const void** data, size_t* count) {
  return nextSliceMessage(initial_, buffer_, elementSize_, data, count);
}

bool BroadcastChainPlan::nextArrival(RelayArrival* arrival) {
  ElementRange slice;
  if (!arriving_.advance(&slice)) return false;
  *arrival = RelayArrival{};
  arrival->landing = buffer_ + slice.offset * elementSize_;
  arrival->count = slice.count;
  if (!position_.isLast()) arrival->forward = arrival->landing;
  return true;
}

ReduceChainPlan::ReduceChainPlan(const ChainPosition& position, const char* input, char* rootOutput,
                                 char* landing, char* staging, size_t count, size_t sliceElems,
                                 size_t elementSize)
    : position_(position),
      input_(input),
      rootOutput_(rootOutput),
      landing_(landing),
      staging_(staging),
      sliceElems_(sliceElems),
      elementSize_(elementSize) {
  const SliceCursor all{{0, count}, sliceElems};
  (position.isLast() ? initial_ : arriving_) = all;
}

bool ReduceChainPlan::nextInitialSend(const void** data, size_t* count) {
  return nextSliceMessage(initial_, input_, elementSize_, data, count);
}

bool ReduceChainPlan::nextArrival(RelayArrival* arrival) {
  ElementRange slice;
  if (!arriving_.advance(&slice)) return false;
  const size_t sliceBytes = sliceElems_ * elementSize_;
  const size_t index = arrivals_++;
  *arrival = RelayArrival{};
  arrival->count = slice.count;
  arrival->landing = landing_ + (index % 2) * sliceBytes;
  arrival->first = input_ + slice.offset * elementSize_;
  arrival->second = arrival->landing;
  if (position_.isRoot()) {
    arrival->reduceInto = rootOutput_ + slice.offset * elementSize_;
  } else {
    arrival->reduceInto = staging_ + (index % kRelayStagingSlices) * sliceBytes;
    arrival->forward = arrival->reduceInto;
  }
  return true;
}

}  // namespace spccl

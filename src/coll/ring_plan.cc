#include "coll/ring_plan.h"

#include <algorithm>

namespace spccl {

size_t ringSliceElements(size_t chunkBytes, size_t totalCount, int nranks, size_t elementSize) {
  size_t largestBlock = evenBlock(totalCount, nranks, 0).count;
  return std::min(sliceElements(chunkBytes, elementSize), std::max<size_t>(largestBlock, 1));
}

RingPlan::RingPlan(int rank, int nranks, size_t totalCount, size_t sliceElems, size_t elementSize,
                   bool reduceScatter, bool allGather, const RingBuffers& buffers)
    : rank_(rank),
      nranks_(nranks),
      total_(totalCount),
      sliceElems_(sliceElems),
      elementSize_(elementSize),
      allGather_(allGather),
      buffers_(buffers),
      phase_(reduceScatter ? Phase::ReduceScatter : Phase::AllGather) {
  // Reduce-scatter starts by passing on block r-1 unreduced; all-gather
  // alone starts with this rank's own block.
  initial_ = {block(reduceScatter ? rank - 1 : rank), sliceElems_};
  initialBase_ = reduceScatter ? buffers_.input : buffers_.output;
  arriving_ = {block(arrivingBlock()), sliceElems_};
}

ElementRange RingPlan::block(int index) const {
  return evenBlock(total_, nranks_, positiveMod(index, nranks_));
}

int RingPlan::arrivingBlock() const {
  return phase_ == Phase::ReduceScatter ? rank_ - step_ - 2 : rank_ - step_ - 1;
}

void RingPlan::enterNextStep() {
  if (++step_ == nranks_ - 1) {
    step_ = 0;
    phase_ = phase_ == Phase::ReduceScatter && allGather_ ? Phase::AllGather : Phase::Done;
  }
  if (phase_ != Phase::Done) arriving_ = {block(arrivingBlock()), sliceElems_};
}

bool RingPlan::nextInitialSend(const void** data, size_t* count) {
  return nextSliceMessage(initial_, initialBase_, elementSize_, data, count);
}

bool RingPlan::nextArrival(RelayArrival* arrival) {
  ElementRange slice;
  while (phase_ != Phase::Done && !arriving_.advance(&slice)) enterNextStep();
  if (phase_ == Phase::Done) return false;
  const bool lastStep = step_ == nranks_ - 2;
  const size_t offset = slice.offset * elementSize_;
  *arrival = RelayArrival{};
  arrival->count = slice.count;
  if (phase_ == Phase::ReduceScatter) {
    arrival->landing = buffers_.landing + (arrivals_++ % 2) * sliceBytes();
    arrival->reduceInto = reducedSliceDestination(slice, lastStep);
    arrival->first = arrival->landing;  // the partial of the ranks upstream
    arrival->second = buffers_.input + offset;
    // The last reduce-scatter step yields this rank's block, which is
    // all-gather's first message.
    if (!lastStep || allGather_) arrival->forward = arrival->reduceInto;
  } else {
    arrival->landing = buffers_.output + offset;
    if (!lastStep) arrival->forward = arrival->landing;
  }
  return true;
}

// All-reduce reduces in place in the output; reduce-scatter alone writes
// only its own block to the caller and stages the slices it forwards.
void* RingPlan::reducedSliceDestination(ElementRange slice, bool lastStep) {
  if (buffers_.ownBlockOutput == nullptr) return buffers_.output + slice.offset * elementSize_;
  if (lastStep)  // the arriving block is block `rank`
    return buffers_.ownBlockOutput + (slice.offset - block(rank_).offset) * elementSize_;
  return buffers_.staging + (staged_++ % kRelayStagingSlices) * sliceBytes();
}

}  // namespace spccl

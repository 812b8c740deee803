// The ring reduce-scatter / all-gather schedule of one rank as a relay
// plan (see ring_schedules.cc for the algorithm and its sources). Blocks
// are evenBlock(totalCount, nranks, i); in reduce-scatter step s rank r
// receives block r-s-2 from r-1, so it ends holding block r; all-gather
// step s receives block r-s-1.
#pragma once

#include <cstddef>

#include "coll/partition.h"
#include "coll/relay_plan.h"

namespace spccl {

struct RingBuffers {
  const char* input = nullptr;     // reduce-scatter: this rank's contribution, block layout
  char* output = nullptr;          // reduced or gathered blocks, block layout
  char* ownBlockOutput = nullptr;  // reduce-scatter alone: block `rank` ends here, others staged
  char* landing = nullptr;         // 2 slices, for reduce-scatter
  char* staging = nullptr;         // kRelayStagingSlices slices, with ownBlockOutput
};

// Slices of chunkBytes, but no longer than the largest block, so small
// calls ask for little scratch.
size_t ringSliceElements(size_t chunkBytes, size_t totalCount, int nranks, size_t elementSize);

class RingPlan final : public RelayPlan {
 public:
  RingPlan(int rank, int nranks, size_t totalCount, size_t sliceElems, size_t elementSize,
           bool reduceScatter, bool allGather, const RingBuffers& buffers);
  bool nextInitialSend(const void** data, size_t* count) override;
  bool nextArrival(RelayArrival* arrival) override;

 private:
  enum class Phase { ReduceScatter, AllGather, Done };

  ElementRange block(int index) const;
  int arrivingBlock() const;
  size_t sliceBytes() const { return sliceElems_ * elementSize_; }
  void enterNextStep();
  void* reducedSliceDestination(ElementRange slice, bool lastStep);

  const int rank_;
  const int nranks_;
  const size_t total_;
  const size_t sliceElems_;
  const size_t elementSize_;
  const bool allGather_;
  const RingBuffers buffers_;
  Phase phase_;
  int step_ = 0;
  SliceCursor initial_;
  const char* initialBase_ = nullptr;
  SliceCursor arriving_;
  size_t arrivals_ = 0;
  size_t staged_ = 0;
};

}  // namespace spccl

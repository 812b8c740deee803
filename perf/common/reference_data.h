// Deterministic inputs for every rank, and the reference results they
// reduce to. The values are chosen so that every result is exact in every
// type, so a check can demand equality instead of guessing a tolerance
// (nccl-tests gets there with its "verifiable" generator; ours is simpler
// because the buffers live on the host).
#pragma once

#include <cstddef>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

enum class InputPattern {
  kDistinct,        // no reduction, or min/max: values 1..101, distinct across 101 ranks
  kSmallSum,        // sum: 1..7, so n ranks sum to at most 7n (int8 exact to 18 ranks, bf16 to 36)
  kPowersOfTwo,     // prod: 1 or 2, at most six 2s per element, so products stay <= 64
  kZeroMeanOffset,  // avg: base +-1 per rank, offsets summing to 0: the average is the base exactly
};

InputPattern inputPatternFor(bool reduces, spcclRedOp_t op);

class ReferenceData {
 public:
  ReferenceData(InputPattern pattern, spcclRedOp_t op, int nranks);

  // Element `index` of rank `rank`'s send buffer.
  double input(int rank, size_t index) const;
  // op applied over input(r, index) of every rank r (avg: sum / nranks).
  double reducedOverRanks(size_t index) const {
    return reducedOnePeriod_[index % reducedOnePeriod_.size()];
  }

  int nranks() const { return nranks_; }
  spcclRedOp_t op() const { return op_; }

 private:
  // Every pattern repeats along the index, so its reduction does too:
  // computed once per period instead of n inputs per checked element.
  size_t period() const;
  double reduce(size_t index) const;

  InputPattern pattern_;
  spcclRedOp_t op_;
  int nranks_;
  std::vector<double> reducedOnePeriod_;
};

}  // namespace spccl::perf

#include "common/reference_data.h"

#include <algorithm>

namespace spccl::perf {

namespace {

// Largest number of ranks a product may see a 2 from.
constexpr int kMaxFactorsOfTwo = 6;
constexpr size_t kDistinctValues = 101;
constexpr size_t kSmallValues = 7;

// Product inputs are 2 on every period-th rank, so that at most
// ceil(n / period) <= kMaxFactorsOfTwo ranks contribute a 2.
size_t powersOfTwoPeriod(int nranks) {
  return static_cast<size_t>(std::max(2, (nranks + kMaxFactorsOfTwo - 1) / kMaxFactorsOfTwo));
}

}  // namespace

InputPattern inputPatternFor(bool reduces, spcclRedOp_t op) {
  if (!reduces) return InputPattern::kDistinct;
  switch (op) {
    case spcclSum:
      return InputPattern::kSmallSum;
    case spcclProd:
      return InputPattern::kPowersOfTwo;
    case spcclAvg:
      return InputPattern::kZeroMeanOffset;
    default:
      return InputPattern::kDistinct;
  }
}

double ReferenceData::input(int rank, size_t index) const {
  const size_t r = static_cast<size_t>(rank);
  switch (pattern_) {
    case InputPattern::kDistinct:
      return static_cast<double>((r * 37 + index) % kDistinctValues + 1);
    case InputPattern::kSmallSum:
      return static_cast<double>((r + index) % kSmallValues + 1);
    case InputPattern::kPowersOfTwo:
      return (r + index) % powersOfTwoPeriod(nranks_) == 0 ? 2.0 : 1.0;
    case InputPattern::kZeroMeanOffset: {
      const double base = static_cast<double>(index % kSmallValues + 2);
      // Pairs (+1, -1); the last rank of an odd count adds 0.
      const bool unpaired = nranks_ % 2 == 1 && rank == nranks_ - 1;
      if (unpaired) return base;
      return rank % 2 == 0 ? base + 1.0 : base - 1.0;
    }
  }
  return 0.0;
}

ReferenceData::ReferenceData(InputPattern pattern, spcclRedOp_t op, int nranks)
    : pattern_(pattern), op_(op), nranks_(nranks) {
  reducedOnePeriod_.resize(period());
  for (size_t i = 0; i < reducedOnePeriod_.size(); ++i) reducedOnePeriod_[i] = reduce(i);
}

size_t ReferenceData::period() const {
  switch (pattern_) {
    case InputPattern::kDistinct:
      return kDistinctValues;
    case InputPattern::kPowersOfTwo:
      return powersOfTwoPeriod(nranks_);
    default:
      return kSmallValues;
  }
}

double ReferenceData::reduce(size_t index) const {
  double result = input(0, index);
  for (int rank = 1; rank < nranks_; ++rank) {
    const double value = input(rank, index);
    switch (op_) {
      case spcclProd:
        result *= value;
        break;
      case spcclMax:
        result = std::max(result, value);
        break;
      case spcclMin:
        result = std::min(result, value);
        break;
      default:
        result += value;
        break;  // sum, avg
    }
  }
  return op_ == spcclAvg ? result / nranks_ : result;
}

}  // namespace spccl::perf

#include "common/compressed_check.h"

#include <algorithm>
#include <cmath>

#include "common/element_codec.h"

namespace spccl::perf {

ErrorStats checkAgainstExact(const PerfSession& s, const CompressedFlags& f, spcclDataType_t type,
                             spcclRedOp_t op, const std::vector<unsigned char>& input,
                             const std::vector<unsigned char>& output, size_t count,
                             const std::vector<size_t>* keptRows) {
  const ElementCodec& codec = *elementCodecFor(type);
  const bool rows = keptRows != nullptr;
  const size_t checked = rows ? keptRows->size() * f.hidden : count;
  // Element of the tensor at position j of the packed (reduced) tensor.
  auto at = [&](size_t j) {
    return rows ? (*keptRows)[j / f.hidden] * f.hidden + j % f.hidden : j;
  };
  std::vector<double> exact(count), blockSums((checked + f.block - 1) / f.block, 0.0);
  for (size_t i = 0; i < count; ++i) exact[i] = codec.load(input.data(), i);
  for (size_t j = 0; j < checked; ++j)
    blockSums[j / f.block] = std::max(blockSums[j / f.block], std::fabs(exact[at(j)]));
  s.require(
      spcclAllReduce(exact.data(), exact.data(), count, spcclFloat64, spcclSum, s.comm(), nullptr),
      "spcclAllReduce (f64 reference)");
  s.require(spcclAllReduce(blockSums.data(), blockSums.data(), blockSums.size(), spcclFloat64,
                           spcclSum, s.comm(), nullptr),
            "spcclAllReduce (block maxima)");
  const int n = s.nranks();
  const double h = halfStep(f), divisor = op == spcclAvg ? n : 1;
  ErrorStats e;
  e.checked = checked;
  for (size_t j = 0; j < checked; ++j) {
    const size_t i = at(j);
    const double want = exact[i] / divisor, got = codec.load(output.data(), i);
    const double a = blockSums[j / f.block];
    const double q =
        f.schedule == spcclCompressTwoShot ? h * a * (2 + h) : a * (std::pow(1 + h, n) - 1);
    const double bound = q / divisor + 1e-5 * a * n + 2 * codec.epsilon * std::fabs(got);
    const double err = std::fabs(got - want);
    e.maxAbs = std::max(e.maxAbs, err);
    e.sumSquares += err * err;
    e.sumSquaresExact += want * want;
    if (!(err <= bound)) ++e.wrong;
  }
  return e;
}

}  // namespace spccl::perf

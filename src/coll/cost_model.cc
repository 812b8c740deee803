#include "coll/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "coll/partition.h"

namespace spccl {

namespace {

double hop(const CostInput& input, double bytes) {
  return input.link.alphaSeconds + bytes * input.link.betaSecondsPerByte;
}

double ranks(const CostInput& input) { return static_cast<double>(input.nranks); }
double bytes(const CostInput& input) { return static_cast<double>(input.bytes); }

}  // namespace

double ringAllReduceCost(const CostInput& input) { return 2.0 * ringHalfCost(input); }

double ringHalfCost(const CostInput& input) {
  if (input.nranks <= 1) return 0.0;
  return (ranks(input) - 1.0) * hop(input, bytes(input) / ranks(input));
}

double recursiveDoublingAllReduceCost(const CostInput& input) {
  if (input.nranks <= 1) return 0.0;
  int p = largestPowerOfTwoAtMost(input.nranks);
  double rounds = std::log2(static_cast<double>(p)) + (p != input.nranks ? 2.0 : 0.0);
  return rounds * hop(input, bytes(input));
}

double binomialTreeCost(const CostInput& input) {
  return ceilLog2(input.nranks) * hop(input, bytes(input));
}

namespace {

double chainCostWith(const CostInput& input, double slices) {
  return (ranks(input) - 2.0 + slices) * hop(input, bytes(input) / slices);
}

}  // namespace

size_t chainSliceCount(const CostInput& input) {
  if (input.bytes == 0) return 1;
  const size_t chunk = input.chunkBytes == 0 ? 1 : input.chunkBytes;
  const size_t fewest = (input.bytes + chunk - 1) / chunk;
  const double alpha = input.link.alphaSeconds, beta = input.link.betaSecondsPerByte;
  if (input.nranks <= 2 || alpha <= 0 || beta <= 0) return fewest;
  // The cost is convex in k with its real minimum at sqrt((n-2) S beta /
  // alpha); the integer optimum is the floor or the ceiling of it.
  double optimum = std::sqrt((ranks(input) - 2.0) * bytes(input) * beta / alpha);
  optimum = std::min(optimum, bytes(input));  // no slice below one byte
  size_t below = static_cast<size_t>(std::floor(optimum));
  size_t above = below + 1;
  size_t best = chainCostWith(input, static_cast<double>(above)) <
                        chainCostWith(input, static_cast<double>(std::max<size_t>(below, 1)))
                    ? above
                    : std::max<size_t>(below, 1);
  return std::max(best, fewest);
}

double pipelinedChainCost(const CostInput& input) {
  if (input.nranks <= 1) return 0.0;
  return chainCostWith(input, static_cast<double>(chainSliceCount(input)));
}

double pairwiseExchangeCost(const CostInput& input) { return ringHalfCost(input); }

double disseminationCost(const CostInput& input) {
  return ceilLog2(input.nranks) * input.link.alphaSeconds;
}

size_t denseCostBytes(const CollArgs& args, int nranks) {
  const size_t payload = args.count * spcclTypeSize(args.datatype);
  switch (args.type) {
    case CollType::AllGather:
    case CollType::ReduceScatter:
    case CollType::AllToAll:
      return payload * static_cast<size_t>(nranks);
    case CollType::Barrier:
    case CollType::AllToAllv:  // per-peer counts differ between ranks
      return 0;
    default:
      return payload;
  }
}

namespace {

using CostFn = double (*)(const CostInput&);

constexpr double kSmallestBytes = 1.0;
constexpr double kLargestBytes = 1125899906842624.0;  // 2^50

double costDifferenceAt(CostFn a, CostFn b, const CostInput& input, double atBytes) {
  CostInput at = input;
  at.bytes = static_cast<size_t>(atBytes);
  return a(at) - b(at);
}

}  // namespace

// The exact crossover moves with every measurement of alpha and beta, so
// sizes near it would flip between algorithms from one run to the next
// (and between a benchmark and the job it tunes). Snapping it to the
// nearest power of two, the granularity at which sizes are usually swept
// and reported, keeps the choice fixed unless the link model changes by
// enough to move the crossover past a power-of-two midpoint.
double roundedCrossoverBytes(CostFn costA, CostFn costB, const CostInput& input) {
  double low = kSmallestBytes, high = kLargestBytes;
  double atLow = costDifferenceAt(costA, costB, input, low);
  double atHigh = costDifferenceAt(costA, costB, input, high);
  if (!((atLow < 0 && atHigh > 0) || (atLow > 0 && atHigh < 0))) return 0.0;
  // Bisect in log space: sizes span 15 decades; 64 halvings reach well
  // below one byte of resolution.
  for (int iteration = 0; iteration < 64; ++iteration) {
    double middle = std::sqrt(low * high);
    double atMiddle = costDifferenceAt(costA, costB, input, middle);
    if ((atMiddle < 0) == (atLow < 0) && atMiddle != 0) {
      low = middle;
      atLow = atMiddle;
    } else {
      high = middle;
    }
  }
  return std::exp2(std::round(std::log2(std::sqrt(low * high))));
}

bool overrideNames(const std::string& override, const char* name) {
  size_t length = std::strlen(name);
  size_t start = 0;
  while (start <= override.size()) {
    size_t end = override.find(',', start);
    if (end == std::string::npos) end = override.size();
    if (end - start == length && override.compare(start, length, name) == 0) return true;
    start = end + 1;
  }
  return false;
}

namespace {

const DenseAlgorithm* overriddenAlgorithm(std::span<const DenseAlgorithm> table, CollType type,
                                          const std::string& override) {
  if (override.empty()) return nullptr;
  for (const DenseAlgorithm& algorithm : table)
    if (algorithm.type == type && overrideNames(override, algorithm.name)) return &algorithm;
  return nullptr;
}

// The cheaper of two candidates, decided on the rounded crossover when
// there is one so that the choice is stable (see roundedCrossoverBytes).
const DenseAlgorithm* cheaper(const DenseAlgorithm* first, const DenseAlgorithm* second,
                              const CostInput& input) {
  double crossover = roundedCrossoverBytes(first->cost, second->cost, input);
  if (crossover > 0) {
    bool firstWinsSmall = costDifferenceAt(first->cost, second->cost, input, kSmallestBytes) < 0;
    bool belowCrossover = static_cast<double>(input.bytes) < crossover;
    return belowCrossover == firstWinsSmall ? first : second;
  }
  return second->cost(input) < first->cost(input) ? second : first;
}

}  // namespace

const DenseAlgorithm* chooseDenseAlgorithm(std::span<const DenseAlgorithm> table, CollType type,
                                           const CostInput& input, const std::string& override,
                                           bool* overridden) {
  const DenseAlgorithm* forced = overriddenAlgorithm(table, type, override);
  if (overridden != nullptr) *overridden = forced != nullptr;
  if (forced != nullptr) return forced;
  const DenseAlgorithm* best = nullptr;
  for (const DenseAlgorithm& candidate : table) {
    if (candidate.type != type) continue;
    best = best == nullptr ? &candidate : cheaper(best, &candidate, input);
  }
  return best;
}

namespace {

std::string formatCost(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof(text), "%.1f us", seconds * 1e6);
  else if (seconds < 1.0)
    std::snprintf(text, sizeof(text), "%.2f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof(text), "%.2f s", seconds);
  return text;
}

}  // namespace

std::string explainDenseChoice(std::span<const DenseAlgorithm> table, const DenseAlgorithm& chosen,
                               const CostInput& input, const std::string& override,
                               bool overridden) {
  if (overridden) return "forced by SPCCL_ALGO=" + override;
  std::string text =
      "cost model: " + std::string(chosen.name) + " " + formatCost(chosen.cost(input));
  int others = 0;
  for (const DenseAlgorithm& candidate : table) {
    if (candidate.type != chosen.type || &candidate == &chosen) continue;
    text += (others++ == 0 ? " vs " : ", ") + std::string(candidate.name) + " " +
            formatCost(candidate.cost(input));
  }
  if (others == 0) return std::string("the only algorithm for ") + collTypeName(chosen.type);
  return text;
}

}  // namespace spccl

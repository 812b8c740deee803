#include "sparse/planner.h"

#include <algorithm>
#include <cmath>

#include "coll/collective.h"
#include "coll/cost_model.h"

namespace spccl::sparse {

namespace {

double alpha(const SparseCostInput& in) { return in.link.alphaSeconds; }
double beta(const SparseCostInput& in) { return in.link.betaSecondsPerByte; }
double M(const SparseCostInput& in) { return static_cast<double>(in.universe); }

// `messages` messages of `bytes` each, sent one after another by one rank.
SparseCost rounds(const SparseCostInput& in, double messages, double bytes) {
  return {messages * (alpha(in) + bytes * beta(in)), messages * bytes};
}

SparseCost operator+(SparseCost a, SparseCost b) {
  return {a.seconds + b.seconds, a.bytesSent + b.bytesSent};
}

// Mean varint length of the gaps (positions skipped, packed_encoding.cc)
// between nnz positions scattered uniformly over U: a gap G is geometric
// with P(G >= g) = (1 - q)^g, q = nnz / U, and a varint takes one byte plus
// one per power 2^(7j) that G reaches, so E[bytes] = 1 + sum_j (1-q)^(2^7j).
// (The mean gap alone overstates it: most gaps are shorter than the mean.)
double meanVarintBytes(double nnz, double universe) {
  if (nnz <= 0 || universe <= 0) return 1.0;
  const double q = std::min(1.0, nnz / universe);
  if (q >= 1.0) return 1.0;
  const double logStay = std::log1p(-q);
  double bytes = 1.0;
  for (int j = 1; j <= 9; ++j) bytes += std::exp(std::ldexp(logStay, 7 * j));
  return bytes;
}

int largestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

constexpr double kBlockElements = 256;  // as block_sparse.cc (OmniReduce)

const SparseAlgorithmInfo kAlgorithms[] = {
    {spcclSparseBalancedParallelism, "bp",
     "Zen Balanced Parallelism: push to balanced owners, aggregate, pull (Def. 6, Eq. 1)",
     balancedParallelismCost},
    {spcclSparseHierarchical, "hc",
     "Zen Hierarchical Centralization: recursive doubling with merging (Def. 7, Eq. 2)",
     hierarchicalCentralizationCost},
    {spcclSparseAllGather, "agsparse", "AGsparse baseline: all-gather of every set, one-shot sum",
     allGatherSparseCost},
    {spcclSparseBlock, "block", "OmniReduce-style 256-element blocks over even owners",
     blockSparseCost},
    {spcclSparseDense, "dense", "dense all-reduce of the whole tensor", denseAllReduceCost},
};

}  // namespace

double densificationAt(const SparseCostInput& in, double k) {
  const double n = std::max(in.nranks, 1);
  double gamma = n > 1 ? 1.0 + (in.gamma - 1.0) * (k - 1.0) / (n - 1.0) : 1.0;
  gamma = std::clamp(gamma, 1.0, std::max(k, 1.0));
  if (in.density > 0) gamma = std::min(gamma, 1.0 / in.density);
  return gamma;
}

double cheapestMessageBytes(double nnz, uint64_t universe, size_t valueBytes, unsigned allowed) {
  nnz = std::clamp(nnz, 0.0, static_cast<double>(universe));
  const size_t count = static_cast<size_t>(std::llround(nnz));
  double best = -1;
  for (Encoding e : {Encoding::Coo, Encoding::Bitmap, Encoding::Packed, Encoding::Dense}) {
    if (!(allowed & (1u << static_cast<unsigned>(e)))) continue;
    double bytes;
    if (e == Encoding::Packed) {
      const double header = static_cast<double>(encodedBytes(Encoding::Coo, 0, universe, valueBytes));
      bytes = header + nnz * (static_cast<double>(valueBytes) +
                              meanVarintBytes(nnz, static_cast<double>(universe)));
    } else {
      bytes = static_cast<double>(encodedBytes(e, count, universe, valueBytes));
    }
    if (best < 0 || bytes < best) best = bytes;
  }
  return std::max(best, 0.0);
}

SparseCost balancedParallelismCost(const SparseCostInput& in) {
  const double n = in.nranks;
  if (in.nranks <= 1) return {};
  const uint64_t part = in.universe / static_cast<uint64_t>(in.nranks);
  const double pushNnz = in.density * M(in) / n;
  const double pullNnz = densificationAt(in, n) * in.density * M(in) / n;
  return rounds(in, n - 1, cheapestMessageBytes(pushNnz, part, in.valueBytes, in.allowedEncodings)) +
         rounds(in, n - 1, cheapestMessageBytes(pullNnz, part, in.valueBytes, in.allowedEncodings));
}

SparseCost hierarchicalCentralizationCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  const int p = largestPowerOfTwoAtMost(in.nranks);
  const double perMember = static_cast<double>(in.nranks) / p;
  // The merged set of k ranks holds gamma(k) d M non-zeros.
  auto setBytes = [&](double ranks) {
    return cheapestMessageBytes(densificationAt(in, ranks) * in.density * M(in), in.universe,
                                in.valueBytes, in.allowedEncodings);
  };
  // A stage whose gamma was learned (the same tag's previous call) sends
  // that many; the rest are interpolated.
  auto stageBytes = [&](int stage, int k) {
    if (static_cast<size_t>(stage) >= in.stageGamma.size()) return setBytes(k * perMember);
    const double nnz = std::min(in.stageGamma[stage] * in.density * M(in), M(in));
    return cheapestMessageBytes(nnz, in.universe, in.valueBytes, in.allowedEncodings);
  };
  SparseCost cost;
  for (int k = 1, stage = 0; k < p; k *= 2, ++stage) cost = cost + rounds(in, 1, stageBytes(stage, k));
  if (p != in.nranks)
    cost = cost + rounds(in, 1, setBytes(1)) + rounds(in, 1, setBytes(in.nranks));
  return cost;
}

SparseCost allGatherSparseCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  return rounds(in, in.nranks - 1,
                cheapestMessageBytes(in.density * M(in), in.universe, in.valueBytes,
                                     in.allowedEncodings));
}

SparseCost blockSparseCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  const double n = in.nranks;
  const double blocksPerOwner = std::ceil(M(in) / kBlockElements) / n;
  const double blockBytes = 8 + kBlockElements * static_cast<double>(in.valueBytes);
  auto nonZeroFraction = [](double d) { return 1.0 - std::pow(1.0 - std::min(d, 1.0), kBlockElements); };
  const double dAfter = densificationAt(in, n) * in.density;
  return rounds(in, n - 1, 8 + blocksPerOwner * nonZeroFraction(in.density) * blockBytes) +
         rounds(in, n - 1, 8 + blocksPerOwner * nonZeroFraction(dAfter) * blockBytes);
}

SparseCost denseAllReduceCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  CostInput dense;
  dense.bytes = static_cast<size_t>(in.universe * in.valueBytes);
  dense.nranks = in.nranks;
  dense.link = in.link;
  dense.chunkBytes = in.chunkBytes;
  const DenseAlgorithm* chosen =
      chooseDenseAlgorithm(denseAlgorithms(), CollType::AllReduce, dense, std::string());
  const double n = in.nranks;
  const double seconds = chosen ? chosen->cost(dense) : ringAllReduceCost(dense);
  return {seconds, 2.0 * (n - 1) / n * static_cast<double>(dense.bytes)};
}

std::span<const SparseAlgorithmInfo> sparseAlgorithms() { return kAlgorithms; }

const char* sparseAlgorithmName(spcclSparseAlgorithm_t algorithm) {
  if (algorithm == spcclSparseAuto) return "auto";
  for (const SparseAlgorithmInfo& a : kAlgorithms)
    if (a.id == algorithm) return a.name;
  return "?";
}

SparseDecision decideSparseAlgorithm(const SparseCostInput& input, spcclSparseAlgorithm_t forced) {
  SparseDecision decision;
  double best = -1;
  for (const SparseAlgorithmInfo& a : kAlgorithms) {
    SparseCost cost = a.cost(input);
    decision.predictedSeconds[a.id] = cost.seconds;
    double seconds = cost.seconds;
    const size_t id = static_cast<size_t>(a.id);
    if (id < input.measuredSeconds.size() && input.measuredSeconds[id] > seconds) {
      seconds = input.measuredSeconds[id];
      decision.measuredMatters = true;
    }
    const bool wins = forced == spcclSparseAuto ? (best < 0 || seconds < best) : a.id == forced;
    if (wins) {
      best = seconds;
      decision.algorithm = a.id;
      decision.predictedBytesSent = cost.bytesSent;
    }
  }
  return decision;
}

GammaEstimate planningGamma(const TagProfile& profile, double density, int nranks,
                            double sketchGamma) {
  GammaEstimate estimate;
  if (profile.learnedGamma > 0) {
    estimate = {profile.learnedGamma, "learned"};
  } else if (sketchGamma > 0) {
    estimate = {sketchGamma, "sketch"};
  } else {
    estimate = {1.0 + (nranks - 1) * 0.5, "prior"};
  }
  estimate.gamma = std::clamp(estimate.gamma, 1.0, std::max(1.0, static_cast<double>(nranks)));
  if (density > 0) estimate.gamma = std::max(1.0, std::min(estimate.gamma, 1.0 / density));
  return estimate;
}

void learnGamma(TagProfile* profile, double density, double meanNnz, uint64_t outputNnz) {
  if (meanNnz <= 0) return;  // nothing to learn from an all-zero call
  profile->learnedGamma = static_cast<double>(outputNnz) / meanNnz;
  profile->learnedAtDensity = density;
}

void recordLocalStages(TagProfile* profile, spcclSparseAlgorithm_t ran,
                       const SparseRunReport& report, double meanNnz) {
  profile->localStages = 0;
  if (ran != spcclSparseHierarchical || meanNnz <= 0) return;
  profile->localStages = std::min(report.mergeStages, kMaxMergeStages);
  for (int i = 0; i < profile->localStages; ++i)
    profile->localStageGamma[i] = static_cast<double>(report.stageSetNnz[i]) / meanNnz;
}

void recordLocalSeconds(TagProfile* profile, spcclSparseAlgorithm_t ran, double seconds,
                        bool firstCallOfTag) {
  profile->localAlgorithm = firstCallOfTag ? -1 : static_cast<int32_t>(ran);
  profile->localSeconds = seconds;
}

void learnMeasuredSeconds(TagProfile* profile, std::span<const int32_t> algorithmOfRank,
                          std::span<const double> secondsOfRank) {
  if (algorithmOfRank.empty()) return;
  const int32_t algorithm = algorithmOfRank[0];
  if (algorithm < 0 || algorithm >= spcclSparseNumAlgorithms) return;
  double slowest = 0;
  for (size_t r = 0; r < algorithmOfRank.size(); ++r) {
    if (algorithmOfRank[r] != algorithm) return;
    slowest = std::max(slowest, secondsOfRank[r]);
  }
  profile->measuredSeconds[algorithm] = slowest;
}

void forgetDensityDependent(TagProfile* profile) {
  std::fill(std::begin(profile->measuredSeconds), std::end(profile->measuredSeconds), 0.0);
  profile->learnedStages = 0;
}

void learnStageGammas(TagProfile* profile, std::span<const int32_t> stagesOfRank,
                      std::span<const double* const> gammasOfRank) {
  int stages = 0;
  for (int32_t s : stagesOfRank) stages = std::max(stages, std::min<int>(s, kMaxMergeStages));
  if (stages == 0) return;
  for (int i = 0; i < stages; ++i) {
    double sum = 0;
    int ranks = 0;
    for (size_t r = 0; r < stagesOfRank.size(); ++r) {
      if (stagesOfRank[r] <= i) continue;
      sum += gammasOfRank[r][i];
      ++ranks;
    }
    profile->learnedStageGamma[i] = sum / ranks;
  }
  profile->learnedStages = stages;
}

TagProfile PlannerState::load(uint64_t tag, uint64_t count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = profiles_.find(keyOf(tag, count));
  return it == profiles_.end() ? TagProfile{} : it->second;
}

void PlannerState::store(uint64_t tag, uint64_t count, const TagProfile& profile) {
  std::lock_guard<std::mutex> lock(mutex_);
  Key key = keyOf(tag, count);
  profiles_[key] = profile;
  if (key.byCount) {
    lastCountKey_ = key;
    anyCountKey_ = true;
  }
}

bool PlannerState::statsFor(uint64_t tag, SparseCallStats* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (tag == 0 && !anyCountKey_) return false;
  auto it = profiles_.find(tag != 0 ? Key{false, tag} : lastCountKey_);
  if (it == profiles_.end()) return false;
  *out = it->second.stats;
  return true;
}

}  // namespace spccl::sparse

#include "sparse/planner.h"

#include <algorithm>
#include <cmath>

#include "coll/collective.h"
#include "coll/cost_model.h"
#include "coll/partition.h"

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
  return {a.seconds + b.seconds, a.bytesSent + b.bytesSent, a.cpuSeconds + b.cpuSeconds};
}

// CPU work, in units of one pair through a merge (cpu_calibration.h),
// per schedule: least-squares fits (relative error) of the call time the
// links do not explain, measured with sparse_all_reduce_perf on loopback,
// n = 4 and 8 ranks on 2 cores, 16 M float32, d = 0.5 % .. 20 %, half of
// each rank's non-zeros shared (docs/perf/sparse.md, "The CPU term").
// Within 25 % of every measured point but n = 8, d = 20 % (BP and HC
// 1.8-2.5x slower still; dense wins there by 30x). Per-schedule figures,
// not per-kernel ones: the kernels' costs overlap (page faults, cache
// misses) too much to add up.

// Per element of M: finding the input's non-zeros, clearing the output.
constexpr double kScanWork = 0.15;
// BP, per local non-zero: owner, bucket sort, push encode and decode,
// aggregation; per result non-zero: pull decode, global indices, scatter.
constexpr double kBpLocalWork = 32;
constexpr double kBpResultWork = 14;
// BP past its break-even (mean density >= 1/8: bp_context.h,
// useDenseRanges) runs over contiguous ranges with dense owners, the pull
// placed straight into the output: its work goes with M, little with the
// pairs. Fitted to rank 0's callgrind counts (n = 8, 4 M f32: 185 M and
// 216 M instructions per call at d = 20 % and 50 %, docs/perf/sparse_cpu.md)
// at the ~17.5 instructions per unit of HC at 1 % (16 M f32, same
// profiles); the dilated testbed's BP then measured within 10 % of it.
constexpr double kBpDenseRangeElementWork = 2.1;
constexpr double kBpDenseRangeLocalWork = 1.35;
// HC, per pair a stage sends: its encode, the partner's decode, the merge.
constexpr double kHcStageWork = 15;
// AGsparse, per pair decoded or merged into the growing sum; per result
// non-zero.
constexpr double kAgGatheredWork = 3.2;
constexpr double kAgResultWork = 6.2;
// Not fitted: per element of a sent block (copied out, reduced in).
constexpr double kBlockElementWork = 2;
// The dense all-reduce, per element of M: its copies through the
// transport's buffers, the reductions and the result's copy. Fitted to
// all_reduce_perf's CPU seconds per call and rank (2-core VM, shm, 16 M
// f32): 30.1 / 26.4 / 29.2 ms out of place and 21.3 / 23.0 / 26.4 ms in
// place at n = 2 / 4 / 8, i.e. 0.44-0.62 units per element at 2.9 ns per
// unit, nearly independent of n. (It was 0.2 x (n-1)/n, unfitted, 2.5-5x
// too low: on fast links, where the dense all-reduce is CPU-bound, dense
// then looked cheapest; on a 16-core H100 host over shm auto took dense
// at n = 2 even at 0.1 %, docs/perf/gpu.md.)
constexpr double kDenseElementWork = 0.5;

SparseCost cpu(const SparseCostInput& in, double pairs) {
  const double seconds = pairs * in.pairSeconds;
  return {seconds, 0, seconds};
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

constexpr double kBlockElements = 256;  // as block_sparse.cc (OmniReduce)

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
      const double header =
          static_cast<double>(encodedBytes(Encoding::Coo, 0, universe, valueBytes));
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
  const double local = in.density * M(in);
  const double result = densificationAt(in, n) * local;
  const double pushNnz = local / n, pullNnz = result / n;
  const bool denseRanges = in.density * 8 >= 1;
  const double work =
      denseRanges ? M(in) * (kScanWork + kBpDenseRangeElementWork) + local * kBpDenseRangeLocalWork
                  : M(in) * kScanWork + local * kBpLocalWork + result * kBpResultWork;
  return rounds(in, n - 1,
                cheapestMessageBytes(pushNnz, part, in.valueBytes, in.allowedEncodings)) +
         rounds(in, n - 1,
                cheapestMessageBytes(pullNnz, part, in.valueBytes, in.allowedEncodings)) +
         cpu(in, work);
}

SparseCost hierarchicalCentralizationCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  const int p = largestPowerOfTwoAtMost(in.nranks);
  const double perMember = static_cast<double>(in.nranks) / p;
  const double local = in.density * M(in);
  // The merged set of k ranks holds gamma(k) d M non-zeros; a stage whose
  // gamma was learned (the same tag's previous call) holds that many.
  auto setNnz = [&](double ranks) { return std::min(densificationAt(in, ranks) * local, M(in)); };
  auto stageNnz = [&](int stage, int k) {
    if (static_cast<size_t>(stage) >= in.stageGamma.size()) return setNnz(k * perMember);
    return std::min(in.stageGamma[stage] * local, M(in));
  };
  auto send = [&](double nnz) {
    return rounds(in, 1,
                  cheapestMessageBytes(nnz, in.universe, in.valueBytes, in.allowedEncodings));
  };
  const double result = setNnz(in.nranks);
  SparseCost cost = cpu(in, M(in) * kScanWork);
  for (int k = 1, stage = 0; k < p; k *= 2, ++stage) {
    const double nnz = stageNnz(stage, k);
    cost = cost + send(nnz) + cpu(in, nnz * kHcStageWork);
  }
  // Fold in a partner's set (a stage's work), hand the result back (sent
  // and decoded, not merged: half a stage's, not fitted).
  if (p != in.nranks)
    cost = cost + send(setNnz(1)) + send(result) +
           cpu(in, local * kHcStageWork + result * kHcStageWork / 2);
  return cost;
}

SparseCost allGatherSparseCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  const double local = in.density * M(in);
  // Decode n-1 sets, merge them one after another into the growing sum
  // (gamma(q) d M after q of them).
  double gathered = (in.nranks - 1) * local;
  for (int q = 1; q < in.nranks; ++q) gathered += (densificationAt(in, q) + 1) * local;
  const double work = M(in) * kScanWork + gathered * kAgGatheredWork +
                      densificationAt(in, in.nranks) * local * kAgResultWork;
  return rounds(in, in.nranks - 1,
                cheapestMessageBytes(local, in.universe, in.valueBytes, in.allowedEncodings)) +
         cpu(in, work);
}

SparseCost blockSparseCost(const SparseCostInput& in) {
  if (in.nranks <= 1) return {};
  const double n = in.nranks;
  const double blocksPerOwner = std::ceil(M(in) / kBlockElements) / n;
  const double blockBytes = 8 + kBlockElements * static_cast<double>(in.valueBytes);
  auto nonZeroFraction = [](double d) {
    return 1.0 - std::pow(1.0 - std::min(d, 1.0), kBlockElements);
  };
  const double dAfter = densificationAt(in, n) * in.density;
  const double pushElements = blocksPerOwner * nonZeroFraction(in.density) * kBlockElements;
  const double pullElements = blocksPerOwner * nonZeroFraction(dAfter) * kBlockElements;
  const double work =
      M(in) * kScanWork + (n - 1) * (pushElements + pullElements) * kBlockElementWork;
  return rounds(in, n - 1, 8 + pushElements / kBlockElements * blockBytes) +
         rounds(in, n - 1, 8 + pullElements / kBlockElements * blockBytes) + cpu(in, work);
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
  const double wire = chosen ? chosen->cost(dense) : ringAllReduceCost(dense);
  const double reduce = M(in) * kDenseElementWork * in.pairSeconds;
  return {std::max(wire, reduce), 2.0 * (n - 1) / n * static_cast<double>(dense.bytes), reduce};
}

LinkModel stableLinkModel(const LinkModel& measured) {
  // In microseconds and nanoseconds per byte, so that round link speeds
  // (1 Gbit/s = 8 ns/B = 2^3) sit at a bin's centre.
  auto snap = [](double value, double unit) {
    if (!(value > 0)) return value;
    return std::exp2(std::round(std::log2(value / unit) * 4) / 4) * unit;
  };
  LinkModel stable = measured;
  stable.alphaSeconds = snap(measured.alphaSeconds, 1e-6);
  stable.betaSecondsPerByte = snap(measured.betaSecondsPerByte, 1e-9);
  return stable;
}

SparseDecision decideSparseAlgorithm(const SparseCostInput& input, spcclSparseAlgorithm_t forced) {
  SparseDecision decision;
  double best = -1, denseSeconds = -1, denseBytes = 0;
  for (const SparseAlgorithmInfo& a : sparseAlgorithms()) {
    SparseCost cost = a.cost(input);
    decision.predictedSeconds[a.id] = cost.seconds;
    double seconds = cost.seconds;
    const size_t id = static_cast<size_t>(a.id);
    if (id < input.measuredSeconds.size() && input.measuredSeconds[id] > seconds) {
      seconds = input.measuredSeconds[id];
      decision.measuredMatters = true;
    }
    const bool wins = forced == spcclSparseAuto ? (best < 0 || seconds < best) : a.id == forced;
    if (a.id == spcclSparseDense) {
      denseSeconds = seconds;
      denseBytes = cost.bytesSent;
    }
    if (wins) {
      best = seconds;
      decision.algorithm = a.id;
      decision.predictedBytesSent = cost.bytesSent;
    }
  }
  if (forced == spcclSparseAuto && input.pairSeconds > 0 &&
      decision.algorithm != spcclSparseDense && denseSeconds >= 0 &&
      best > (1 - kSparseMargin) * denseSeconds) {
    decision.algorithm = spcclSparseDense;
    decision.predictedBytesSent = denseBytes;
    decision.denseWithinMargin = true;
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

bool PlannerState::pairSecondsKnown() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pairSeconds_ >= 0;
}

double PlannerState::pairSeconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::max(pairSeconds_, 0.0);
}

void PlannerState::setPairSeconds(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  pairSeconds_ = std::max(seconds, 0.0);
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

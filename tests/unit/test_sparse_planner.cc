// The sparse all-reduce cost model and planner: the paper's formulas as
// limits of the model, the two regimes of Zen section 2.4, and the
// profile's bookkeeping.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sparse/overlap_sketch.h"
#include "sparse/planner.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse {
namespace {

SparseCostInput input(int n, uint64_t M, double d, double gamma) {
  SparseCostInput in;
  in.nranks = n;
  in.universe = M;
  in.valueBytes = 4;
  in.density = d;
  in.gamma = gamma;
  in.link.alphaSeconds = 20e-6;
  in.link.betaSecondsPerByte = 1e-9;  // 1 GB/s
  return in;
}

constexpr unsigned kCooOnly = 1u << static_cast<unsigned>(Encoding::Coo);

// With COO (4-byte index + 4-byte value = the paper's 2 words) and no
// latency, the model is Eq. (1) exactly, up to the message headers.
TEST(SparsePlanner, BalancedParallelismIsEquationOneWithCoo) {
  for (int n : {2, 4, 16}) {
    for (double gamma : {1.0, 1.5, static_cast<double>(n)}) {
      SparseCostInput in = input(n, 100'000'000, 0.01, gamma);
      in.link.alphaSeconds = 0;
      in.allowedEncodings = kCooOnly;
      const double eq1 = (n - 1.0) / n * (gamma + 1) * 2 * 1e8 * 0.01 * 4 * 1e-9;
      EXPECT_NEAR(balancedParallelismCost(in).seconds, eq1, eq1 * 1e-3) << n << " " << gamma;
    }
  }
}

// Eq. (2) with no overlap (gamma(k) = k): stages of 1, 2, 4, ... sets.
TEST(SparsePlanner, HierarchicalIsEquationTwoWithCoo) {
  SparseCostInput in = input(8, 100'000'000, 0.001, 8);
  in.link.alphaSeconds = 0;
  in.allowedEncodings = kCooOnly;
  const double eq2 = (1 + 2 + 4) * 2 * 1e8 * 0.001 * 4 * 1e-9;
  EXPECT_NEAR(hierarchicalCentralizationCost(in).seconds, eq2, eq2 * 1e-3);
  // Full overlap: every stage carries one set's worth, log2 n of them.
  in.gamma = 1;
  const double full = 3 * 2 * 1e8 * 0.001 * 4 * 1e-9;
  EXPECT_NEAR(hierarchicalCentralizationCost(in).seconds, full, full * 1e-3);
  // Non-power-of-two: the fold and unfold add two messages.
  SparseCostInput odd = input(6, 100'000'000, 0.001, 1);
  odd.link.alphaSeconds = 0;
  odd.allowedEncodings = kCooOnly;
  EXPECT_NEAR(hierarchicalCentralizationCost(odd).seconds, 4 * 8e5 * 1e-9, 4 * 8e5 * 1e-12);
}

// Learned stage gammas replace the interpolation stage by stage: Eq. (2)
// with the sets each stage really sent.
TEST(SparsePlanner, HierarchicalUsesLearnedStageGammas) {
  SparseCostInput in = input(8, 100'000'000, 0.001, 4);
  in.link.alphaSeconds = 0;
  in.allowedEncodings = kCooOnly;
  const double learned[] = {1.0, 1.9};  // stage 2 is left to the interpolation
  in.stageGamma = learned;
  const double stage2 = 1.0 + 3.0 * 3.0 / 7.0;  // densificationAt(in, 4)
  const double eq2 = (1.0 + 1.9 + stage2) * 2 * 1e8 * 0.001 * 4 * 1e-9;
  EXPECT_NEAR(hierarchicalCentralizationCost(in).seconds, eq2, eq2 * 1e-3);
}

// Each rank reports its own stage sets over the mean nnz; the agreed value
// is the mean over the ranks that ran the stage (folded ranks ran none).
TEST(SparsePlanner, StageGammasAreLearnedFromEveryRanksReport) {
  SparseRunReport report;
  report.mergeStages = 2;
  report.stageSetNnz[0] = 100;
  report.stageSetNnz[1] = 180;
  TagProfile mine;
  recordLocalStages(&mine, spcclSparseHierarchical, report, 100.0);
  ASSERT_EQ(mine.localStages, 2);
  EXPECT_DOUBLE_EQ(mine.localStageGamma[1], 1.8);
  TagProfile other;
  recordLocalStages(&other, spcclSparseBalancedParallelism, report, 100.0);
  EXPECT_EQ(other.localStages, 0);  // only HC reports stages

  const double rank0[] = {1.0, 1.8}, rank1[] = {1.2, 2.0}, folded[] = {0, 0};
  const int32_t stages[] = {2, 2, 0};
  const double* gammas[] = {rank0, rank1, folded};
  TagProfile agreed;
  learnStageGammas(&agreed, stages, gammas);
  ASSERT_EQ(agreed.learnedStages, 2);
  EXPECT_DOUBLE_EQ(agreed.learnedStageGamma[0], 1.1);
  EXPECT_DOUBLE_EQ(agreed.learnedStageGamma[1], 1.9);
  const int32_t none[] = {0, 0, 0};
  learnStageGammas(&agreed, none, gammas);  // nothing new: keep what was learned
  EXPECT_EQ(agreed.learnedStages, 2);
}

// An algorithm costs at least what it measured: the model's favourite is
// dropped once its real time (CPU included) exceeds another's.
TEST(SparsePlanner, MeasuredTimesOverrideAnOptimisticModel) {
  SparseCostInput in = input(8, 16'000'000, 0.05, 4);
  const SparseDecision modelOnly = decideSparseAlgorithm(in, spcclSparseAuto);
  ASSERT_NE(modelOnly.algorithm, spcclSparseDense);
  EXPECT_FALSE(modelOnly.measuredMatters);
  double measured[spcclSparseNumAlgorithms] = {};
  for (int a = 1; a < spcclSparseNumAlgorithms; ++a) measured[a] = 10.0;  // every sparse one slow
  measured[spcclSparseDense] = 0;                                         // dense never run
  in.measuredSeconds = measured;
  const SparseDecision withMeasured = decideSparseAlgorithm(in, spcclSparseAuto);
  EXPECT_EQ(withMeasured.algorithm, spcclSparseDense);
  EXPECT_TRUE(withMeasured.measuredMatters);
  // The model's prediction is still what the stats report.
  EXPECT_DOUBLE_EQ(withMeasured.predictedSeconds[modelOnly.algorithm],
                   modelOnly.predictedSeconds[modelOnly.algorithm]);
}

// The slowest rank's time of the previous call is kept, only when every
// rank ran the same algorithm; the tag's first call is never kept.
TEST(SparsePlanner, MeasuredTimesAreTheSlowestRanksAndAgreed) {
  TagProfile local;
  recordLocalSeconds(&local, spcclSparseHierarchical, 0.5, /*firstCallOfTag=*/true);
  EXPECT_EQ(local.localAlgorithm, -1);
  recordLocalSeconds(&local, spcclSparseHierarchical, 0.5, false);
  EXPECT_EQ(local.localAlgorithm, spcclSparseHierarchical);

  TagProfile agreed;
  const int32_t same[] = {spcclSparseHierarchical, spcclSparseHierarchical};
  const double seconds[] = {0.4, 0.7};
  learnMeasuredSeconds(&agreed, same, seconds);
  EXPECT_DOUBLE_EQ(agreed.measuredSeconds[spcclSparseHierarchical], 0.7);
  const int32_t differ[] = {spcclSparseHierarchical, -1};
  const double later[] = {9.0, 9.0};
  learnMeasuredSeconds(&agreed, differ, later);
  EXPECT_DOUBLE_EQ(agreed.measuredSeconds[spcclSparseHierarchical], 0.7);
  agreed.learnedStages = 2;
  forgetDensityDependent(&agreed);
  EXPECT_DOUBLE_EQ(agreed.measuredSeconds[spcclSparseHierarchical], 0.0);
  EXPECT_EQ(agreed.learnedStages, 0);
}

TEST(SparsePlanner, DensificationInterpolatesAndCaps) {
  SparseCostInput in = input(16, 1000, 0.01, 4);
  EXPECT_DOUBLE_EQ(densificationAt(in, 1), 1.0);
  EXPECT_DOUBLE_EQ(densificationAt(in, 16), 4.0);
  EXPECT_GT(densificationAt(in, 8), 1.0);
  EXPECT_LT(densificationAt(in, 8), 4.0);
  in.gamma = 16;
  in.density = 0.25;  // at most 4x denser before the tensor is full
  EXPECT_DOUBLE_EQ(densificationAt(in, 16), 4.0);
}

// Zen section 2.4: with hardly any overlap and a tiny density the
// log2 n stages of HC beat BP's 2(n-1) messages.
TEST(SparsePlanner, HierarchicalWinsWithNoOverlapAndTinyDensity) {
  SparseCostInput in = input(16, 10'000'000, 1e-6, 16);
  SparseDecision d = decideSparseAlgorithm(in, spcclSparseAuto);
  EXPECT_EQ(d.algorithm, spcclSparseHierarchical);
  EXPECT_LT(d.predictedSeconds[spcclSparseHierarchical],
            d.predictedSeconds[spcclSparseBalancedParallelism]);
}

// ... and with high overlap (small gamma) and a moderate density BP wins:
// HC would carry the whole set log2 n times (Zen Lemma 2 / Figure 8).
TEST(SparsePlanner, BalancedParallelismWinsWithHighOverlapAndModerateDensity) {
  for (int n : {8, 16, 64}) {
    SparseCostInput in = input(n, 10'000'000, 0.05, 1.2);
    SparseDecision d = decideSparseAlgorithm(in, spcclSparseAuto);
    EXPECT_EQ(d.algorithm, spcclSparseBalancedParallelism) << n;
    EXPECT_LT(d.predictedSeconds[spcclSparseBalancedParallelism],
              d.predictedSeconds[spcclSparseAllGather])
        << n;
    EXPECT_LT(d.predictedSeconds[spcclSparseBalancedParallelism],
              d.predictedSeconds[spcclSparseDense])
        << n;
  }
}

// The CPU term (cpu_calibration.h): 8 ranks sharing 2 cores over 1 Gbit/s
// links, 16 M float32. At d = 10 % the links alone favour BP (about a
// quarter of dense's time), but its CPU work outweighs the bytes it saves,
// so dense wins; at d = 0.1 % sparsity still wins by far. Without the term
// (0) the decision is the links' alone.
TEST(SparsePlanner, CpuTermPricesTheSchedulesWork) {
  auto onSharedCores = [](double d, double pairSeconds) {
    SparseCostInput in = input(8, 16'777'216, d, 4);
    in.link.alphaSeconds = 50e-6;
    in.link.betaSecondsPerByte = 8e-9;  // 1 Gbit/s
    in.pairSeconds = pairSeconds;
    return in;
  };
  const double eightRanksOnTwoCores = 3e-9 * 4;
  SparseDecision linksOnly = decideSparseAlgorithm(onSharedCores(0.1, 0), spcclSparseAuto);
  EXPECT_EQ(linksOnly.algorithm, spcclSparseBalancedParallelism);
  EXPECT_LT(linksOnly.predictedSeconds[spcclSparseBalancedParallelism] * 3,
            linksOnly.predictedSeconds[spcclSparseDense]);
  SparseDecision withCpu =
      decideSparseAlgorithm(onSharedCores(0.1, eightRanksOnTwoCores), spcclSparseAuto);
  EXPECT_EQ(withCpu.algorithm, spcclSparseDense);
  SparseDecision sparseStillWins =
      decideSparseAlgorithm(onSharedCores(0.001, eightRanksOnTwoCores), spcclSparseAuto);
  EXPECT_NE(sparseStillWins.algorithm, spcclSparseDense);
  EXPECT_LT(sparseStillWins.predictedSeconds[sparseStillWins.algorithm] * 3,
            sparseStillWins.predictedSeconds[spcclSparseDense]);
  // Near a tie dense wins: at d = 5 % HC is predicted a few % faster than
  // dense, well inside the CPU fit's error (kSparseMargin).
  SparseDecision nearTie =
      decideSparseAlgorithm(onSharedCores(0.05, eightRanksOnTwoCores), spcclSparseAuto);
  EXPECT_EQ(nearTie.algorithm, spcclSparseDense);
  EXPECT_TRUE(nearTie.denseWithinMargin);
  EXPECT_LT(nearTie.predictedSeconds[spcclSparseHierarchical],
            nearTie.predictedSeconds[spcclSparseDense]);
  EXPECT_GT(nearTie.predictedSeconds[spcclSparseHierarchical],
            (1 - kSparseMargin) * nearTie.predictedSeconds[spcclSparseDense]);
  EXPECT_FALSE(sparseStillWins.denseWithinMargin);
  // The CPU share is reported and scales with the CPU's speed.
  for (auto cost : {balancedParallelismCost, hierarchicalCentralizationCost, allGatherSparseCost}) {
    const SparseCost off = cost(onSharedCores(0.05, 0));
    const SparseCost slow = cost(onSharedCores(0.05, eightRanksOnTwoCores));
    const SparseCost slower = cost(onSharedCores(0.05, 2 * eightRanksOnTwoCores));
    EXPECT_EQ(off.cpuSeconds, 0);
    EXPECT_GT(slow.cpuSeconds, 0);
    EXPECT_NEAR(slower.cpuSeconds, 2 * slow.cpuSeconds, 1e-12);
    EXPECT_NEAR(slow.seconds, off.seconds + slow.cpuSeconds, 1e-12);
    EXPECT_EQ(slow.bytesSent, off.bytesSent);
  }
}

// On a fast link (shared memory on a big host: 10 GB/s, one rank per
// core) the dense all-reduce is CPU-bound: its copies and reductions over
// the whole tensor cost more than the wire. Priced so, a 0.1 % tensor goes
// sparse; with the dense CPU work priced at a fifth of the measured (the
// old model) dense looked cheapest, as auto chose on an H100 host
// (docs/perf/gpu.md).
TEST(SparsePlanner, DenseCpuWorkCountsOnFastLinks) {
  SparseCostInput in = input(2, 16'777'216, 0.001, 1.75);
  in.link.alphaSeconds = 5e-6;
  in.link.betaSecondsPerByte = 0.1e-9;  // 10 GB/s
  in.pairSeconds = 2.9e-9;
  const SparseDecision d = decideSparseAlgorithm(in, spcclSparseAuto);
  const SparseCost dense = denseAllReduceCost(in);
  // The measured figure: ~25 ms of CPU per call and rank for 16 M f32.
  EXPECT_NEAR(dense.cpuSeconds, 0.5 * 16'777'216 * 2.9e-9, 1e-6);
  EXPECT_GE(dense.seconds, dense.cpuSeconds);
  EXPECT_NE(d.algorithm, spcclSparseDense);
  EXPECT_LT(d.predictedSeconds[d.algorithm], (1 - kSparseMargin) * dense.seconds);
}

// Re-measured 1 Gbit/s links within a few % price the same (run-to-run
// stable choices); any snapped figure is within 9 % of the measured one.
TEST(SparsePlanner, LinkModelIsSnappedForStableChoices) {
  for (double scale : {0.95, 0.98, 1.0, 1.03, 1.06}) {
    LinkModel measured;
    measured.betaSecondsPerByte = 8e-9 * scale;  // 1 Gbit/s
    const LinkModel stable = stableLinkModel(measured);
    EXPECT_NEAR(stable.betaSecondsPerByte, 8e-9, 1e-18) << scale;
  }
  for (double seconds : {1e-11, 3.3e-10, 7e-9, 1e-7, 2e-6, 45e-6}) {
    LinkModel measured;
    measured.alphaSeconds = seconds;
    measured.betaSecondsPerByte = seconds;
    const LinkModel snapped = stableLinkModel(measured);
    EXPECT_LE(std::abs(snapped.alphaSeconds / seconds - 1), 0.091) << seconds;
    EXPECT_LE(std::abs(snapped.betaSecondsPerByte / seconds - 1), 0.091) << seconds;
  }
}

// A full tensor gains nothing from sparsity: dense (or a schedule that
// costs the same) wins, and AGsparse is far worse.
TEST(SparsePlanner, DenseTensorPrefersDense) {
  SparseCostInput in = input(8, 10'000'000, 1.0, 1.0);
  SparseDecision d = decideSparseAlgorithm(in, spcclSparseAuto);
  EXPECT_LE(d.predictedSeconds[spcclSparseDense], d.predictedSeconds[d.algorithm] * 1.01);
  EXPECT_GT(d.predictedSeconds[spcclSparseAllGather], 2 * d.predictedSeconds[spcclSparseDense]);
}

// The real encodings make the pull of a dense-enough aggregate a bitmap:
// cheaper than the paper's COO.
TEST(SparsePlanner, RealEncodingsAreNeverWorseThanCoo) {
  for (double d : {1e-5, 1e-3, 0.05, 0.5}) {
    SparseCostInput all = input(16, 10'000'000, d, 2);
    SparseCostInput coo = all;
    coo.allowedEncodings = kCooOnly;
    EXPECT_LE(balancedParallelismCost(all).seconds, balancedParallelismCost(coo).seconds * 1.0001)
        << d;
    EXPECT_LE(hierarchicalCentralizationCost(all).seconds,
              hierarchicalCentralizationCost(coo).seconds * 1.0001)
        << d;
  }
}

TEST(SparsePlanner, ForcedAlgorithmIsTakenButEveryCostIsReported) {
  SparseCostInput in = input(4, 100000, 0.01, 2);
  SparseDecision d = decideSparseAlgorithm(in, spcclSparseBlock);
  EXPECT_EQ(d.algorithm, spcclSparseBlock);
  for (const SparseAlgorithmInfo& a : sparseAlgorithms())
    EXPECT_GT(d.predictedSeconds[a.id], 0) << a.name;
  EXPECT_LT(d.predictedSeconds[spcclSparseAuto], 0);
  EXPECT_STREQ(sparseAlgorithmName(spcclSparseHierarchical), "hc");
}

TEST(SparsePlanner, GammaComesFromHistoryThenSketchThenPrior) {
  TagProfile fresh;
  EXPECT_STREQ(planningGamma(fresh, 0.01, 8, 0).source, "prior");
  EXPECT_DOUBLE_EQ(planningGamma(fresh, 0.01, 8, 0).gamma, 4.5);
  EXPECT_STREQ(planningGamma(fresh, 0.01, 8, 3).source, "sketch");
  EXPECT_DOUBLE_EQ(planningGamma(fresh, 0.01, 8, 3).gamma, 3);
  TagProfile learned;
  learnGamma(&learned, 0.01, 1000, 2500);
  EXPECT_STREQ(planningGamma(learned, 0.01, 8, 3).source, "learned");
  EXPECT_DOUBLE_EQ(planningGamma(learned, 0.01, 8, 3).gamma, 2.5);
  // Clamped to [1, n] and to d * gamma <= 1.
  EXPECT_DOUBLE_EQ(planningGamma(fresh, 0.01, 8, 50).gamma, 8);
  EXPECT_DOUBLE_EQ(planningGamma(fresh, 0.5, 8, 6).gamma, 2);
  EXPECT_DOUBLE_EQ(planningGamma(fresh, 0.01, 8, 0.2).gamma, 1);
  learnGamma(&learned, 0.0, 0, 0);  // an all-zero call teaches nothing
  EXPECT_DOUBLE_EQ(learned.learnedGamma, 2.5);
}

TEST(SparsePlanner, OverlapSketchEstimatesTheUnion) {
  // Small sets: exact.
  std::vector<uint64_t> a = {1, 2, 3}, b = {3, 4};
  OverlapSketch s[2] = {sketchIndices(a.data(), a.size(), 7), sketchIndices(b.data(), b.size(), 7)};
  uint64_t sizes[2] = {3, 2};
  EXPECT_DOUBLE_EQ(estimateUnionSize(s, sizes), 4);
  // Large sets: 4 ranks, each 20000 indices of which half are shared.
  std::vector<OverlapSketch> sketches;
  std::vector<uint64_t> counts;
  for (uint64_t r = 0; r < 4; ++r) {
    std::vector<uint64_t> set;
    for (uint64_t i = 0; i < 10000; ++i) set.push_back(i);                        // shared
    for (uint64_t i = 0; i < 10000; ++i) set.push_back(1'000'000 * (r + 1) + i);  // own
    sketches.push_back(sketchIndices(set.data(), set.size(), 99));
    counts.push_back(set.size());
  }
  const double estimate = estimateUnionSize(sketches, counts);
  EXPECT_GT(estimate, 50000 * 0.6);
  EXPECT_LT(estimate, 50000 * 1.6);
}

TEST(SparsePlanner, ProfilesAreKeyedByTagOrCount) {
  PlannerState state;
  SparseCallStats out;
  EXPECT_FALSE(state.statsFor(0, &out));
  TagProfile p;
  p.stats.calls = 3;
  state.store(0, 1000, p);
  p.stats.calls = 5;
  state.store(0, 2000, p);
  p.stats.calls = 7;
  state.store(9, 1000, p);
  EXPECT_EQ(state.load(0, 1000).stats.calls, 3u);
  EXPECT_EQ(state.load(9, 4242).stats.calls, 7u);
  ASSERT_TRUE(state.statsFor(0, &out));
  EXPECT_EQ(out.calls, 5u);  // the last count-keyed call
  ASSERT_TRUE(state.statsFor(9, &out));
  EXPECT_EQ(out.calls, 7u);
  EXPECT_FALSE(state.statsFor(10, &out));
}

TEST(SparsePlanner, ImbalanceRatioIsZenDefinitionEight) {
  const uint64_t balanced[4] = {5, 5, 5, 5}, skewed[4] = {20, 0, 0, 0}, empty[3] = {0, 0, 0};
  EXPECT_DOUBLE_EQ(imbalanceRatio(balanced), 1.0);
  EXPECT_DOUBLE_EQ(imbalanceRatio(skewed), 4.0);
  EXPECT_DOUBLE_EQ(imbalanceRatio(empty), 1.0);
}

}  // namespace
}  // namespace spccl::sparse

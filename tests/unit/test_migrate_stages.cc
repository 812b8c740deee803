// DynPipe stage rebalancing (DynPipe, sections 3.4-3.5): the exact
// partition against brute force on small cases, diffusion's convergence
// within Lemma 2's bound, first-fit re-packing within memory, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "migrate/stage_balancing.h"
#include "spccl.h"

namespace spccl::migrate {
namespace {

// Every contiguous partition into nStages non-empty stages that fits the
// memory; the smallest maximum stage sum of weights (infinity if none).
double bruteForceBest(const std::vector<double>& w, const std::vector<double>& mem, int nStages,
                      double cap) {
  const int n = static_cast<int>(w.size());
  double best = INFINITY;
  // cuts: bitmask over the n - 1 gaps with exactly nStages - 1 bits set.
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    if (__builtin_popcount(mask) != nStages - 1) continue;
    double worst = 0, sum = 0, used = 0;
    bool fits = true;
    for (int i = 0; i < n; ++i) {
      sum += w[i];
      used += mem[i];
      if (i == n - 1 || (mask >> i) & 1u) {
        worst = std::max(worst, sum);
        fits &= used <= cap;
        sum = used = 0;
      }
    }
    if (fits) best = std::min(best, worst);
  }
  return best;
}

bool contiguous(const std::vector<int>& stageOfLayer, int nStages) {
  if (stageOfLayer.empty() || stageOfLayer[0] != 0) return false;
  for (size_t i = 1; i < stageOfLayer.size(); ++i) {
    const int step = stageOfLayer[i] - stageOfLayer[i - 1];
    if (step != 0 && step != 1) return false;
  }
  return stageOfLayer.back() == nStages - 1;
}

std::vector<double> stageSums(const std::vector<double>& w, const std::vector<int>& of,
                              int nStages) {
  std::vector<double> sums(nStages, 0.0);
  for (size_t i = 0; i < w.size(); ++i) sums[of[i]] += w[i];
  return sums;
}

TEST(StagePartition, OptimalAgainstBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.1, 10.0), mem(1.0, 5.0);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 1 + trial % 10;
    const int stages = 1 + (trial / 10) % std::min(n, 5);
    std::vector<double> w(n), m(n);
    for (int i = 0; i < n; ++i) {
      w[i] = cost(rng);
      m[i] = mem(rng);
    }
    const double cap = trial % 3 == 0 ? INFINITY : 5.0 + (trial % 7) * 2.0;
    const double expected = bruteForceBest(w, m, stages, cap);
    StageOfLayer layout;
    const bool found = optimalPartition(w, m, stages, cap, &layout);
    ASSERT_EQ(found, std::isfinite(expected)) << "trial " << trial;
    if (!found) {
      ++infeasible;
      continue;
    }
    ++feasible;
    ASSERT_TRUE(contiguous(layout, stages)) << "trial " << trial;
    EXPECT_NEAR(stageMaximum(w, layout, stages), expected, 1e-9) << "trial " << trial;
    for (double used : stageSums(m, layout, stages)) EXPECT_LE(used, cap);
  }
  EXPECT_GT(feasible, 100);
  EXPECT_GT(infeasible, 10);  // the memory limit really bites in some cases
}

// Worked by hand: costs {4, 1, 1, 1, 1, 4} on 3 stages; the best split is
// {4 | 1 1 1 1 | 4} with maximum 4. By parameters with memory {1, 1, 1, 1,
// 1, 1}: two layers each, maximum parameters 2.
TEST(StagePartition, ByTimeAndByParametersHandWorked) {
  const double costs[] = {4, 1, 1, 1, 1, 4}, mem[] = {1, 1, 1, 1, 1, 1};
  int layout[6];
  spcclStagePartitionInfo_t info{};
  ASSERT_EQ(
      spcclStagePartition(costs, mem, 6, 3, INFINITY, spcclStagePartitionByTime, layout, &info),
      spcclSuccess);
  EXPECT_EQ(std::vector<int>(layout, layout + 6), (std::vector<int>{0, 1, 1, 1, 1, 2}));
  EXPECT_EQ(info.maxStageCost, 4);
  ASSERT_EQ(spcclStagePartition(costs, mem, 6, 3, INFINITY, spcclStagePartitionByParameters, layout,
                                &info),
            spcclSuccess);
  EXPECT_EQ(std::vector<int>(layout, layout + 6), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(info.maxStageMemory, 2);
  EXPECT_EQ(info.maxStageCost, 5);  // what balancing parameters costs in time
  // A memory cap of 3 forbids the 4-layer middle stage: {4 1 | 1 1 | 1 4} -> 5.
  ASSERT_EQ(spcclStagePartition(costs, mem, 6, 3, 3.0, spcclStagePartitionByTime, layout, &info),
            spcclSuccess);
  EXPECT_EQ(info.maxStageCost, 5);
  EXPECT_LE(info.maxStageMemory, 3);
}

// Diffusion from a lopsided start converges within Lemma 2's bound, never
// ends worse than it started, and leaves no improving boundary move; on
// two stages it reaches the optimum (the pair maximum is unimodal in the
// cut).
TEST(StageDiffusion, ConvergesWithinLemma2Bound) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> cost(0.1, 10.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int stages = 2 + trial % 7;
    const int n = stages + trial % 40;
    std::vector<double> w(n);
    for (double& x : w) x = cost(rng);
    std::vector<int> layout(n);
    for (int i = 0; i < n; ++i) layout[i] = std::max(0, i - (n - stages));  // all on stage 0
    const double before = stageMaximum(w, layout, stages);
    spcclStagePartitionInfo_t info{};
    ASSERT_EQ(spcclStagePartition(w.data(), nullptr, n, stages, INFINITY, spcclStageDiffusion,
                                  layout.data(), &info),
              spcclSuccess);
    EXPECT_TRUE(contiguous(layout, stages));
    EXPECT_LE(info.maxStageCost, before);
    EXPECT_EQ(info.roundBound, diffusionRoundBound(stages, 1e-3));
    EXPECT_LT(info.rounds, info.roundBound) << "trial " << trial;
    // Converged: a further run moves nothing.
    bool converged = false;
    StageOfLayer again(layout.begin(), layout.end());
    EXPECT_EQ(diffuse(w, {}, stages, INFINITY, 1e-3, 10, &again, &converged), 1);
    EXPECT_TRUE(converged);
    if (stages == 2) {
      StageOfLayer best;
      ASSERT_TRUE(optimalPartition(w, {}, 2, INFINITY, &best));
      const double mean = (w.empty() ? 0 : std::accumulate(w.begin(), w.end(), 0.0)) / 2;
      EXPECT_LE(info.maxStageCost, stageMaximum(w, best, 2) + 1e-3 * mean + 1e-9);
    }
  }
}

TEST(StageDiffusion, RespectsMemory) {
  // Moving the heavy layer 1 to stage 1 would balance time but not fit.
  const double costs[] = {1, 5, 1}, mem[] = {1, 3, 1};
  int layout[] = {0, 0, 1};
  spcclStagePartitionInfo_t info{};
  ASSERT_EQ(spcclStagePartition(costs, mem, 3, 2, 4.0, spcclStageDiffusion, layout, &info),
            spcclSuccess);
  EXPECT_LE(info.maxStageMemory, 4.0);
  EXPECT_EQ(std::vector<int>(layout, layout + 3), (std::vector<int>{0, 0, 1}));
}

TEST(StageRepack, NeverExceedsCapacity) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> mem(0.5, 4.0);
  for (int trial = 0; trial < 300; ++trial) {
    const int stages = 1 + trial % 8;
    const int n = stages + trial % 17;
    std::vector<double> m(n);
    for (double& x : m) x = mem(rng);
    std::vector<int> layout(n);
    for (int i = 0; i < n; ++i) layout[i] = std::min(stages - 1, i * stages / n);
    const auto before = stageSums(m, layout, stages);
    const double cap = *std::max_element(before.begin(), before.end()) * (1.0 + (trial % 4));
    std::vector<int> packed(n);
    int newStages = 0;
    ASSERT_EQ(spcclRepack(m.data(), layout.data(), n, stages, cap, 0, packed.data(), &newStages),
              spcclSuccess);
    EXPECT_LE(newStages, stages);
    EXPECT_TRUE(contiguous(packed, newStages));
    for (double used : stageSums(m, packed, newStages)) EXPECT_LE(used, cap);
    // First fit ran to the end: no two neighbouring stages fit together.
    const auto sums = stageSums(m, packed, newStages);
    for (int s = 0; s + 1 < newStages; ++s) EXPECT_GT(sums[s] + sums[s + 1], cap);
  }
}

// Worked by hand: memory {2 | 1 | 1 | 3} with capacity 4: stages 0 and 1
// merge (3), then 0+2 (4), then 4 + 3 > 4: two stages {2 1 1 | 3}.
TEST(StageRepack, FirstFitHandWorked) {
  const double mem[] = {2, 1, 1, 3};
  const int layout[] = {0, 1, 2, 3};
  int packed[4], newStages = 0;
  ASSERT_EQ(spcclRepack(mem, layout, 4, 4, 4.0, 0, packed, &newStages), spcclSuccess);
  EXPECT_EQ(newStages, 2);
  EXPECT_EQ(std::vector<int>(packed, packed + 4), (std::vector<int>{0, 0, 0, 1}));
  // Stopping at a target of 3: only the first merge.
  ASSERT_EQ(spcclRepack(mem, layout, 4, 4, 4.0, 3, packed, &newStages), spcclSuccess);
  EXPECT_EQ(newStages, 3);
  EXPECT_EQ(std::vector<int>(packed, packed + 4), (std::vector<int>{0, 0, 1, 2}));
}

void expectInvalid(spcclResult_t res, const char* mentions) {
  EXPECT_EQ(res, spcclInvalidArgument);
  const std::string message = spcclGetLastError(nullptr);
  EXPECT_NE(message.find(mentions), std::string::npos) << message;
}

TEST(StageBalancing, BadInputNamesTheProblem) {
  const double costs[] = {1, 2, 3}, mem[] = {1, 5, 1};
  int layout[3] = {0, 1, 1}, packed[3], newStages = 0;
  const double nan[] = {1, NAN, 3};
  expectInvalid(
      spcclStagePartition(costs, mem, 3, 4, INFINITY, spcclStagePartitionByTime, layout, nullptr),
      "nStages 4 exceeds nLayers 3");
  expectInvalid(
      spcclStagePartition(nan, mem, 3, 2, INFINITY, spcclStagePartitionByTime, layout, nullptr),
      "layerCosts[1] = nan");
  expectInvalid(
      spcclStagePartition(costs, mem, 3, 2, NAN, spcclStagePartitionByTime, layout, nullptr),
      "memCapacity nan");
  expectInvalid(
      spcclStagePartition(costs, mem, 3, 2, 4.0, spcclStagePartitionByTime, layout, nullptr),
      "memCapacity 4 is too small for any partition");
  expectInvalid(spcclStagePartition(costs, nullptr, 3, 2, 4.0, spcclStagePartitionByParameters,
                                    layout, nullptr),
                "layerMem is NULL");
  expectInvalid(spcclStagePartition(costs, mem, 3, 2, 9.0, static_cast<spcclStageMethod_t>(9),
                                    layout, nullptr),
                "method 9");
  int broken[3] = {0, 2, 1};
  expectInvalid(spcclStagePartition(costs, mem, 3, 3, 9.0, spcclStageDiffusion, broken, nullptr),
                "stageOfLayer[1] = 2");
  expectInvalid(spcclRepack(mem, layout, 3, 2, 4.0, 0, packed, &newStages), "stage 1 needs 6");
  expectInvalid(spcclRepack(mem, layout, 3, 2, 6.0, 3, packed, &newStages), "targetStages 3");
  expectInvalid(spcclRepack(mem, layout, 3, 2, 6.5, 1, packed, &newStages), "out of reach");
}

}  // namespace
}  // namespace spccl::migrate

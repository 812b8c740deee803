// AccTFM Algorithm 1 (src/compress/partition_planner.h): a two-layer case
// worked by hand, SplitOrMerge in both directions, brute force over all
// 3^L plans, and the C entry point (backward order, bad arguments).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compress/partition_planner.h"
#include "spccl.h"

namespace spccl::compress {
namespace {

// Two equal layers, compute 4 s, communication 4 s (bandwidth), alpha 1 s.
// By hand (CalParEnd, line numbers of Algorithm 1):
//  (1,1): L1 cp 4, cm 4+5 = 9; L2 cp 13, cm 18.
//  (2,2): t_cp 2, t_cm 3. L1 cm ends [5, 8], cp 4; L2 (line 23: last cm
//         starts at 8) cp 7, cm 11; cp 10, cm 14            -> 14.
//  (4,2): L1 cm [3,5,7,9]; merged to [5,9]; cp 7, cm 12; cp 11, cm 15 -> 15.
//  (2,4): L1 [5,8] split to [5,5,8,8]; cm 10,12,14,16        -> 16.
//  (4,4): 17; (1,2): 17; (2,1): 17; (1,4), (4,1): 18.
// Best: (2,2), 14.
TEST(CompressPlanner, HandWorkedTwoLayers) {
  const std::vector<LayerTimes> layers{{4, 4}, {4, 4}};
  const double alpha = 1;
  auto plan = [&](int a, int b) {
    const std::vector<int> sizes{a, b};
    return simulatePlan(layers, alpha, sizes);
  };
  EXPECT_DOUBLE_EQ(plan(1, 1), 18);
  EXPECT_DOUBLE_EQ(plan(2, 2), 14);
  EXPECT_DOUBLE_EQ(plan(4, 2), 15);
  EXPECT_DOUBLE_EQ(plan(2, 4), 16);
  EXPECT_DOUBLE_EQ(plan(4, 4), 17);
  EXPECT_DOUBLE_EQ(plan(1, 2), 17);
  EXPECT_DOUBLE_EQ(plan(2, 1), 17);
  EXPECT_DOUBLE_EQ(plan(1, 4), 18);
  EXPECT_DOUBLE_EQ(plan(4, 1), 18);
  std::vector<int> sizes;
  EXPECT_DOUBLE_EQ(planPartitions(layers, alpha, &sizes), 14);
  EXPECT_EQ(sizes, (std::vector<int>{2, 2}));
}

TEST(CompressPlanner, NoLatencyMeansFinestPartitions) {
  const std::vector<LayerTimes> layers{{4, 4}, {4, 4}, {1, 3}};
  std::vector<int> sizes;
  planPartitions(layers, 0.0, &sizes);
  EXPECT_EQ(sizes, (std::vector<int>{4, 4, 4}));
}

TEST(CompressPlanner, SplitAndMergeFollowTheDependencies) {
  PipelineEnd twoBatches;
  twoBatches.computeEnd = 4;
  twoBatches.commEnds = {5, 8};
  // Split to 4: micro-batches 1, 2 wait for 5, 3, 4 for 8; compute 1, comm 0.
  // Computes end 6, 7, 9, 10; the new layer's communication cannot start
  // before 8 (line 23).
  PipelineEnd split = nextLayerEnd(twoBatches, 1, 0, 4);
  EXPECT_EQ(split.commEnds, (std::vector<double>{8, 8, 9, 10}));
  EXPECT_DOUBLE_EQ(split.computeEnd, 10);
  PipelineEnd merged = nextLayerEnd(twoBatches, 1, 1, 1);
  EXPECT_DOUBLE_EQ(merged.computeEnd, 9);  // waits for the later of the two
  EXPECT_DOUBLE_EQ(merged.commEnds.back(), 10);
}

// Algorithm 1 keeps one predecessor per size, so it is a heuristic in
// general; on these profiles (compute-heavy, comm-heavy, alternating) it
// finds the brute-force optimum.
TEST(CompressPlanner, MatchesBruteForceOnSmallModels) {
  const std::vector<std::vector<LayerTimes>> models{
      {{4, 4}, {4, 4}, {4, 4}},
      {{8, 1}, {1, 8}, {8, 1}, {1, 8}},
      {{2, 6}, {6, 2}, {3, 3}, {1, 1}, {5, 5}},
  };
  for (double alpha : {0.0, 0.2, 1.0, 3.0}) {
    for (const auto& layers : models) {
      const size_t L = layers.size();
      double best = INFINITY;
      std::vector<int> sizes(L);
      for (size_t code = 0; code < std::pow(3, L); ++code) {
        size_t c = code;
        for (size_t l = 0; l < L; ++l, c /= 3) sizes[l] = kPartitionSizes[c % 3];
        best = std::min(best, simulatePlan(layers, alpha, sizes));
      }
      std::vector<int> plan;
      const double predicted = planPartitions(layers, alpha, &plan);
      EXPECT_DOUBLE_EQ(predicted, simulatePlan(layers, alpha, plan));
      EXPECT_NEAR(predicted, best, 1e-9) << "alpha " << alpha << " layers " << L;
    }
  }
}

TEST(CompressPlanner, CEntryPoint) {
  const spcclLayerCost layers[3] = {{1, 0}, {4, 4e9}, {4, 4e9}};
  int sizes[3] = {0, 0, 0};
  double seconds = 0;
  // beta 1 ns/byte: the two heavy layers are the hand-worked case.
  ASSERT_EQ(spcclPlanPartitions(layers + 1, 2, 1.0, 1e-9, 0, sizes, &seconds), spcclSuccess);
  EXPECT_EQ(sizes[0], 2);
  EXPECT_EQ(sizes[1], 2);
  EXPECT_NEAR(seconds, 14, 1e-9);
  // Backward: the same layers reversed; results stay indexed by layer.
  ASSERT_EQ(spcclPlanPartitions(layers, 3, 1.0, 1e-9, 1, sizes, &seconds), spcclSuccess);
  std::vector<LayerTimes> reversed{{4, 4}, {4, 4}, {1, 0}};
  std::vector<int> expected;
  EXPECT_NEAR(seconds, planPartitions(reversed, 1.0, &expected), 1e-9);
  EXPECT_EQ(sizes[0], expected[2]);
  EXPECT_EQ(sizes[2], expected[0]);
  EXPECT_EQ(spcclPlanPartitions(nullptr, 2, 1, 1, 0, sizes, nullptr), spcclInvalidArgument);
  EXPECT_EQ(spcclPlanPartitions(layers, 3, -1, 1, 0, sizes, nullptr), spcclInvalidArgument);
  EXPECT_EQ(spcclPlanPartitions(layers, 3, 1, 1, 0, nullptr, nullptr), spcclInvalidArgument);
}

}  // namespace
}  // namespace spccl::compress

// The alpha-beta costs of the dense algorithms and the choice among them.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "coll/cost_model.h"

namespace spccl {
namespace {

using CostFn = double (*)(const CostInput&);

// The link of the acceptance criteria: 20 us latency, 1 Gbit/s.
LinkModel gigabitLink() {
  LinkModel link;
  link.alphaSeconds = 20e-6;
  link.betaSecondsPerByte = 1.0 / 1.25e8;
  link.measured = true;
  return link;
}

CostInput inputFor(size_t bytes, int nranks, LinkModel link = gigabitLink()) {
  CostInput input;
  input.bytes = bytes;
  input.nranks = nranks;
  input.link = link;
  return input;
}

const std::vector<std::pair<const char*, CostFn>>& allCosts() {
  static const std::vector<std::pair<const char*, CostFn>> costs = {
      {"ringAllReduce", ringAllReduceCost},
      {"recursiveDoubling", recursiveDoublingAllReduceCost},
      {"ringHalf", ringHalfCost},
      {"binomialTree", binomialTreeCost},
      {"pipelinedChain", pipelinedChainCost},
      {"pairwiseExchange", pairwiseExchangeCost},
      {"dissemination", disseminationCost},
  };
  return costs;
}

TEST(CostModel, EveryCostGrowsWithSize) {
  for (const auto& [name, cost] : allCosts()) {
    for (int nranks : {2, 3, 5, 8, 17, 64}) {
      double previous = -1.0;
      for (size_t bytes = 0; bytes <= (size_t{1} << 36);
           bytes = bytes == 0 ? 1 : bytes + bytes / 3 + 1) {
        double value = cost(inputFor(bytes, nranks));
        EXPECT_GE(value, previous) << name << " n=" << nranks << " bytes=" << bytes;
        previous = value;
      }
    }
  }
}

TEST(CostModel, OneRankCostsNothing) {
  for (const auto& [name, cost] : allCosts()) EXPECT_EQ(cost(inputFor(1 << 20, 1)), 0.0) << name;
}

TEST(CostModel, RingFormulaMatchesTheSpec) {
  CostInput input = inputFor(8000000, 8);
  double alpha = input.link.alphaSeconds, beta = input.link.betaSecondsPerByte;
  EXPECT_NEAR(ringAllReduceCost(input), 14 * alpha + 2.0 * 7 / 8 * 8000000 * beta, 1e-12);
  EXPECT_NEAR(recursiveDoublingAllReduceCost(input), 3 * (alpha + 8000000 * beta), 1e-12);
  // Six ranks fold two extra ranks in and out around two rounds.
  EXPECT_NEAR(recursiveDoublingAllReduceCost(inputFor(1000, 6)), 4 * (alpha + 1000 * beta), 1e-12);
  EXPECT_NEAR(binomialTreeCost(inputFor(1000, 5)), 3 * (alpha + 1000 * beta), 1e-12);
  EXPECT_NEAR(disseminationCost(inputFor(0, 9)), 4 * alpha, 1e-15);
}

TEST(CostModel, RingWinsLargeAndLosesTinyAllReduceAtEightRanks) {
  EXPECT_LT(ringAllReduceCost(inputFor(64 << 20, 8)),
            recursiveDoublingAllReduceCost(inputFor(64 << 20, 8)));
  EXPECT_GT(ringAllReduceCost(inputFor(8, 8)), recursiveDoublingAllReduceCost(inputFor(8, 8)));
}

TEST(CostModel, ChainSlicesRespectTheChunkAndTheOptimum) {
  CostInput input = inputFor(64 << 20, 8);
  input.chunkBytes = 1 << 20;
  size_t slices = chainSliceCount(input);
  EXPECT_GE(slices, size_t{64});  // no slice above chunkBytes
  // It is the best integer k at or above the chunk bound.
  auto chainCost = [&](size_t k) {
    return (8 - 2.0 + k) *
           (input.link.alphaSeconds + double(input.bytes) / k * input.link.betaSecondsPerByte);
  };
  for (size_t k = 64; k < 4096; ++k) EXPECT_LE(chainCost(slices), chainCost(k) + 1e-15) << k;
  EXPECT_NEAR(pipelinedChainCost(input), chainCost(slices), 1e-12);
  // A chunk bound above the optimum leaves the optimum.
  input.chunkBytes = size_t{1} << 40;
  EXPECT_GT(chainSliceCount(input), size_t{1});
  // Two ranks gain nothing from slicing beyond the chunk bound.
  input = inputFor(10 << 20, 2);
  input.chunkBytes = 1 << 20;
  EXPECT_EQ(chainSliceCount(input), size_t{10});
  EXPECT_EQ(chainSliceCount(inputFor(0, 8)), size_t{1});
}

TEST(CostModel, ChainBeatsBinomialBroadcastOnlyForLargeMessages) {
  EXPECT_LT(binomialTreeCost(inputFor(64, 16)), pipelinedChainCost(inputFor(64, 16)));
  EXPECT_GT(binomialTreeCost(inputFor(256 << 20, 16)), pipelinedChainCost(inputFor(256 << 20, 16)));
}

bool isPowerOfTwo(double value) {
  double exponent = std::log2(value);
  return value > 0 && exponent == std::floor(exponent);
}

TEST(CostModel, CrossoverIsRoundedToAPowerOfTwo) {
  CostInput input = inputFor(0, 8);
  double crossover =
      roundedCrossoverBytes(ringAllReduceCost, recursiveDoublingAllReduceCost, input);
  // Exact: 14a + 1.75 S b = 3a + 3 S b  =>  S = 11a / (1.25 b) = 22000 bytes.
  double exact = 11 * input.link.alphaSeconds / (1.25 * input.link.betaSecondsPerByte);
  ASSERT_GT(crossover, 0);
  EXPECT_TRUE(isPowerOfTwo(crossover)) << crossover;
  EXPECT_EQ(crossover, 16384.0) << "exact " << exact;
  EXPECT_LE(crossover / exact, std::sqrt(2.0) + 1e-9);
  EXPECT_GE(crossover / exact, 1 / std::sqrt(2.0) - 1e-9);
  // Symmetric in the order of the two candidates.
  EXPECT_EQ(roundedCrossoverBytes(recursiveDoublingAllReduceCost, ringAllReduceCost, input),
            crossover);
}

// A few percent of jitter in alpha or beta keeps 22000 * scale within
// [2^13.5, 2^14.5), so the rounded crossover does not move.
TEST(CostModel, CrossoverIgnoresMeasurementJitter) {
  const double reference =
      roundedCrossoverBytes(ringAllReduceCost, recursiveDoublingAllReduceCost, inputFor(0, 8));
  for (double alphaScale : {0.98, 0.99, 1.0, 1.01, 1.02}) {
    for (double betaScale : {0.99, 1.0, 1.01}) {
      LinkModel link = gigabitLink();
      link.alphaSeconds *= alphaScale;
      link.betaSecondsPerByte *= betaScale;
      EXPECT_EQ(roundedCrossoverBytes(ringAllReduceCost, recursiveDoublingAllReduceCost,
                                      inputFor(0, 8, link)),
                reference)
          << alphaScale << " " << betaScale;
    }
  }
}

TEST(CostModel, NoCrossoverWhenOneAlwaysWins) {
  // At two ranks recursive doubling (a + S b) always beats ring (2a + S b).
  EXPECT_EQ(
      roundedCrossoverBytes(ringAllReduceCost, recursiveDoublingAllReduceCost, inputFor(0, 2)),
      0.0);
}

TEST(CostModel, OverrideListsAreCommaSeparatedNames) {
  EXPECT_TRUE(overrideNames("ring", "ring"));
  EXPECT_TRUE(overrideNames("binomial,ring", "ring"));
  EXPECT_TRUE(overrideNames("ring,binomial", "binomial"));
  EXPECT_FALSE(overrideNames("rin", "ring"));
  EXPECT_FALSE(overrideNames("rings", "ring"));
  EXPECT_FALSE(overrideNames("", "ring"));
  EXPECT_FALSE(overrideNames("ring_x,", "ring"));
}

// A table shaped like algorithms.cc's, with the real cost functions; the
// run functions are not called by selection.
const DenseAlgorithm kTable[] = {
    {"ring", CollType::AllReduce, "", ringAllReduceCost, nullptr},
    {"recursive_doubling", CollType::AllReduce, "", recursiveDoublingAllReduceCost, nullptr},
    {"binomial", CollType::Broadcast, "", binomialTreeCost, nullptr},
    {"pipelined_chain", CollType::Broadcast, "", pipelinedChainCost, nullptr},
    {"ring", CollType::AllGather, "", ringHalfCost, nullptr},
};

const char* chosenName(CollType type, size_t bytes, int nranks, const std::string& override,
                       bool* overridden = nullptr) {
  const DenseAlgorithm* chosen =
      chooseDenseAlgorithm(kTable, type, inputFor(bytes, nranks), override, overridden);
  return chosen == nullptr ? "(none)" : chosen->name;
}

TEST(Selection, CheapestByModel) {
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64, 8, ""), "recursive_doubling");
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64 << 20, 8, ""), "ring");
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64 << 20, 2, ""), "recursive_doubling");
  EXPECT_STREQ(chosenName(CollType::Broadcast, 64, 16, ""), "binomial");
  EXPECT_STREQ(chosenName(CollType::Broadcast, 256 << 20, 16, ""), "pipelined_chain");
  EXPECT_STREQ(chosenName(CollType::AllGather, 1, 16, ""), "ring");
  EXPECT_STREQ(chosenName(CollType::Barrier, 0, 16, ""), "(none)");
}

TEST(Selection, DecidesOnTheRoundedCrossover) {
  // The exact crossover is 22000 bytes; the rounded one 16384.
  EXPECT_STREQ(chosenName(CollType::AllReduce, 16383, 8, ""), "recursive_doubling");
  EXPECT_STREQ(chosenName(CollType::AllReduce, 16384, 8, ""), "ring");
  EXPECT_STREQ(chosenName(CollType::AllReduce, 20000, 8, ""), "ring");
}

TEST(Selection, OverrideNamingThisCollectiveWins) {
  bool overridden = false;
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64, 8, "ring", &overridden), "ring");
  EXPECT_TRUE(overridden);
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64 << 20, 8, "recursive_doubling"),
               "recursive_doubling");
  // One list can steer several collectives.
  EXPECT_STREQ(chosenName(CollType::Broadcast, 64, 16, "recursive_doubling,pipelined_chain"),
               "pipelined_chain");
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64 << 20, 16, "recursive_doubling,pipelined_chain"),
               "recursive_doubling");
}

TEST(Selection, OverrideNamingAnotherCollectiveIsIgnored) {
  bool overridden = true;
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64, 8, "pipelined_chain", &overridden),
               "recursive_doubling");
  EXPECT_FALSE(overridden);
  EXPECT_STREQ(chosenName(CollType::AllReduce, 64 << 20, 8, "no_such_algorithm"), "ring");
}

TEST(Selection, CostBytesAreTheWholeBuffer) {
  CollArgs args;
  args.count = 10;
  args.datatype = spcclFloat64;
  args.type = CollType::AllReduce;
  EXPECT_EQ(denseCostBytes(args, 4), size_t{80});
  args.type = CollType::AllGather;
  EXPECT_EQ(denseCostBytes(args, 4), size_t{320});
  args.type = CollType::ReduceScatter;
  EXPECT_EQ(denseCostBytes(args, 4), size_t{320});
  args.type = CollType::Barrier;
  EXPECT_EQ(denseCostBytes(args, 4), size_t{0});
}

// The reason the COLL log line gives (coll/cost_model.h).
TEST(Selection, ExplainsTheChoiceWithEveryCandidatesCost) {
  const CostInput input = inputFor(64 << 20, 8);
  bool overridden = false;
  const DenseAlgorithm* chosen =
      chooseDenseAlgorithm(kTable, CollType::AllReduce, input, "", &overridden);
  ASSERT_NE(chosen, nullptr);
  // 64 MiB on 8 ranks at 1 Gbit/s: ring 939.8 ms, recursive doubling 1.61 s.
  EXPECT_EQ(explainDenseChoice(kTable, *chosen, input, "", overridden),
            "cost model: ring 939.80 ms vs recursive_doubling 1.61 s");
  // Small: recursive doubling first, in microseconds.
  const CostInput small = inputFor(64, 8);
  chosen = chooseDenseAlgorithm(kTable, CollType::AllReduce, small, "", &overridden);
  EXPECT_EQ(explainDenseChoice(kTable, *chosen, small, "", overridden),
            "cost model: recursive_doubling 61.5 us vs ring 280.9 us");
}

TEST(Selection, ExplainsAForcedChoiceAndAnOnlyCandidate) {
  const CostInput input = inputFor(4096, 4);
  bool overridden = false;
  const DenseAlgorithm* chosen =
      chooseDenseAlgorithm(kTable, CollType::AllReduce, input, "binomial,ring", &overridden);
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(explainDenseChoice(kTable, *chosen, input, "binomial,ring", overridden),
            "forced by SPCCL_ALGO=binomial,ring");
  chosen = chooseDenseAlgorithm(kTable, CollType::AllGather, input, "", &overridden);
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(explainDenseChoice(kTable, *chosen, input, "", overridden),
            "the only algorithm for AllGather");
}

}  // namespace
}  // namespace spccl

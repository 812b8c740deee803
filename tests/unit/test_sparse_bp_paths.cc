// Balanced Parallelism's output and schedule helpers: densifySortedParts
// against a plain clear-and-scatter for every value width, parts that
// straddle its blocks and empty parts; and the dense-range switch's
// threshold (a mean of M/8 non-zeros per rank).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "sparse/bp_context.h"
#include "sparse/bp_sorted_parts.h"

namespace spccl::sparse::bp {
namespace {

void checkDensify(size_t count, int parts, double density, size_t valueBytes, uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "count " << count << " parts " << parts << " density "
                                  << density << " valueBytes " << valueBytes);
  std::mt19937_64 rng(seed);
  std::vector<SparseSet> sets(static_cast<size_t>(parts));
  std::vector<unsigned char> expected(count * valueBytes, 0);
  std::bernoulli_distribution present(density);
  for (size_t i = 0; i < count; ++i) {
    if (!present(rng)) continue;
    SparseSet& set = sets[rng() % sets.size()];  // disjoint, each ascending
    set.positions.push_back(i);
    for (size_t b = 0; b < valueBytes; ++b) {
      // Never all-zero bytes: a lost value shows.
      const auto byte = static_cast<unsigned char>(1 + (i >> (8 * (b % 8))) % 255);
      set.values.push_back(byte);
      expected[i * valueBytes + b] = byte;
    }
  }
  std::vector<const SparseSet*> pointers;
  for (const SparseSet& s : sets) pointers.push_back(&s);
  // Stale contents must be overwritten, zeros included.
  std::vector<unsigned char> dense(count * valueBytes, 0xAB);
  densifySortedParts(valueBytes, pointers, dense.data(), count);
  EXPECT_EQ(dense, expected);
}

TEST(BpSortedParts, DensifyEqualsClearAndScatter) {
  for (size_t valueBytes : {1, 2, 4, 8, 3})
    for (size_t count : {size_t{0}, size_t{1}, size_t{4095}, size_t{4097}, size_t{20000}})
      for (double density : {0.0, 0.01, 0.5, 1.0}) checkDensify(count, 5, density, valueBytes, 7);
}

// BP in pieces: pieces x ranks parts, on larger blocks.
TEST(BpSortedParts, ManyPartsTakeLargerBlocks) {
  for (size_t valueBytes : {2, 4, 8})
    for (int parts : {16, 40, 200})
      for (double density : {0.001, 0.05, 1.0})
        checkDensify(300000 + 7, parts, density, valueBytes, 9);
}

TEST(BpSortedParts, NoPartsClearsTheOutput) {
  std::vector<float> dense(9000, 1.5f);
  densifySortedParts(sizeof(float), {}, dense.data(), dense.size());
  for (float v : dense) ASSERT_EQ(v, 0.0f);
}

TEST(BpDenseRanges, SwitchesAtAMeanOfAnEighthPerRank) {
  const uint64_t m = 16 << 20;
  EXPECT_FALSE(useDenseRanges(8 * (m / 8) - 1, 8, m));
  EXPECT_TRUE(useDenseRanges(8 * (m / 8), 8, m));
  EXPECT_FALSE(useDenseRanges(8 * m, 1, m));  // one rank: nothing to exchange
  EXPECT_FALSE(useDenseRanges(0, 8, 0));
  // No overflow for huge tensors.
  EXPECT_FALSE(useDenseRanges(uint64_t{1} << 62, 1024, uint64_t{1} << 62));
  EXPECT_TRUE(useDenseRanges(uint64_t{1} << 62, 4, uint64_t{1} << 62));
}

}  // namespace
}  // namespace spccl::sparse::bp

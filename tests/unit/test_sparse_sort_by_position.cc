// sortByPosition: radix, rank-by-bitmap and comparison paths against
// std::sort, for every value width, small and large inputs, and positions
// up to 2^64 - 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "sparse/sparse_messages.h"

namespace spccl::sparse {
namespace {

void checkSort(size_t nnz, size_t valueBytes, uint64_t universe, uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "nnz " << nnz << " valueBytes " << valueBytes << " universe "
                                  << universe);
  std::mt19937_64 rng(seed);
  // Unique positions (the sets' invariant), shuffled.
  std::vector<uint64_t> positions(nnz);
  for (uint64_t& p : positions) p = universe == 0 ? rng() : rng() % universe;
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::shuffle(positions.begin(), positions.end(), rng);
  const size_t n = positions.size();
  // Each value encodes its position, so a value that travels without its
  // position is caught.
  std::vector<unsigned char> values(n * valueBytes);
  for (size_t i = 0; i < n; ++i)
    for (size_t b = 0; b < valueBytes; ++b)
      values[i * valueBytes + b] = static_cast<unsigned char>(positions[i] >> (8 * (b % 8)));
  std::vector<uint64_t> expected = positions;
  std::sort(expected.begin(), expected.end());

  sortByPosition(positions.data(), values.data(), n, valueBytes);
  ASSERT_EQ(positions, expected);
  for (size_t i = 0; i < n; ++i)
    for (size_t b = 0; b < valueBytes; ++b)
      ASSERT_EQ(values[i * valueBytes + b],
                static_cast<unsigned char>(positions[i] >> (8 * (b % 8))))
          << "value of entry " << i;
}

TEST(SparseSortByPosition, MatchesStdSortForEveryWidthAndSize) {
  for (size_t valueBytes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{3}}) {
    for (size_t nnz : {size_t{0}, size_t{1}, size_t{2}, size_t{255}, size_t{256}, size_t{5000},
                       size_t{100000}}) {
      // 2^21: two radix passes up to 5000 pairs, rank by bitmap at 100000
      // (dense enough: 2^21 / 64 words < nnz); 1000: by bitmap from 256.
      checkSort(nnz, valueBytes, 1u << 21, nnz * 7 + valueBytes);
      checkSort(nnz, valueBytes, 1000, nnz * 11 + valueBytes);
      checkSort(nnz, valueBytes, 64 * nnz + 1, nnz * 13 + valueBytes);  // at the switch
    }
    checkSort(20000, valueBytes, 0, valueBytes);  // full 64-bit positions: six passes
  }
}

TEST(SparseSortByPosition, SortedInputIsLeftAlone) {
  std::vector<uint64_t> positions(1000);
  std::iota(positions.begin(), positions.end(), uint64_t{5});
  std::vector<unsigned char> values(1000 * 4, 7);
  sortByPosition(positions.data(), values.data(), positions.size(), 4);
  EXPECT_TRUE(std::is_sorted(positions.begin(), positions.end()));
  EXPECT_EQ(positions.front(), 5u);
}

}  // namespace
}  // namespace spccl::sparse

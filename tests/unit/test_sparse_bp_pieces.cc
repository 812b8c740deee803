// Balanced Parallelism's cut of its push buckets into pieces
// (bp_piece_split.h): every pair lands in the piece of its owner's range
// that holds its position, rebased to the piece's start, with its value,
// in its bucket's order; empty buckets, empty pieces, pieces of one
// position and odd value widths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "sparse/bp_piece_split.h"

namespace spccl::sparse::bp {
namespace {

void checkSplit(std::vector<uint64_t> partSizes, int pieces, double density, size_t valueBytes,
                uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "parts " << partSizes.size() << " pieces " << pieces
                                  << " density " << density << " valueBytes " << valueBytes);
  std::mt19937_64 rng(seed);
  const int parts = static_cast<int>(partSizes.size());
  std::vector<EvenRanges> ranges;
  Buckets buckets;
  buckets.offsets.push_back(0);
  for (int p = 0; p < parts; ++p) {
    ranges.emplace_back(partSizes[p], pieces);
    std::vector<uint64_t> chosen;
    for (uint64_t i = 0; i < partSizes[p]; ++i)
      if (std::bernoulli_distribution(density)(rng)) chosen.push_back(i);
    std::shuffle(chosen.begin(), chosen.end(), rng);  // buckets come in any order
    for (uint64_t position : chosen) {
      buckets.positions.push_back(position);
      for (size_t b = 0; b < valueBytes; ++b)
        buckets.values.push_back(static_cast<unsigned char>(position * 31 + b + 1));
    }
    buckets.offsets.push_back(buckets.positions.size());
  }
  const Buckets original = buckets;
  std::vector<uint64_t> scratchPositions{7, 7};
  std::vector<unsigned char> scratchValues;
  PieceCuts cuts;
  cuts.pieces = pieces;
  splitPieces(ranges, valueBytes, &buckets, &scratchPositions, &scratchValues, &cuts);
  for (int p = 0; p < parts; ++p) {
    // Expected: the bucket's pairs of each piece, in the bucket's order.
    size_t at = buckets.offsets[p];
    ASSERT_EQ(cuts.begin(p, 0), at);
    for (int k = 0; k < pieces; ++k) {
      ASSERT_EQ(cuts.begin(p, k), at);
      for (size_t i = original.offsets[p]; i < original.offsets[p + 1]; ++i) {
        const uint64_t position = original.positions[i];
        if (position < ranges[p].start(k) || position >= ranges[p].start(k + 1)) continue;
        ASSERT_LT(at, cuts.begin(p, k + 1));
        EXPECT_EQ(buckets.positions[at], position - ranges[p].start(k));
        EXPECT_EQ(0, std::memcmp(&buckets.values[at * valueBytes], &original.values[i * valueBytes],
                                 valueBytes));
        ++at;
      }
      ASSERT_EQ(cuts.begin(p, k + 1), at) << "piece " << k << " of bucket " << p;
    }
  }
  EXPECT_EQ(cuts.begin(parts, 0), original.offsets[parts]);
}

TEST(BpPieceSplit, EveryPairInItsPieceRebasedInOrder) {
  for (size_t valueBytes : {2, 4, 8, 3})
    for (int pieces : {1, 2, 5, 16})
      for (double density : {0.0, 0.02, 0.5, 1.0})
        checkSplit({1000, 999, 1001}, pieces, density, valueBytes, 11);
}

TEST(BpPieceSplit, EmptyBucketsAndOnePositionPieces) {
  // As many pieces as the smallest part has positions; a part of none
  // (its bucket is empty).
  checkSplit({4, 4, 5, 0}, 4, 1.0, 4, 3);
  checkSplit({16, 17}, 16, 0.3, 8, 5);
}

}  // namespace
}  // namespace spccl::sparse::bp

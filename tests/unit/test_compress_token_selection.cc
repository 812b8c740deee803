// The token choice of the top-k all-reduce (src/compress/token_selection.h)
// against a full stable sort, and the row packing (token_rows.h): ties by
// lower index, +0 == -0, NaN below every number, keep 0 and keep = all,
// rank-order score sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "compress/token_rows.h"
#include "compress/token_selection.h"

namespace spccl::compress {
namespace {

// Reference: NaN last, then descending score, ties by index (stable sort).
std::vector<unsigned char> sortedReference(const std::vector<float>& s, size_t keep) {
  std::vector<size_t> order(s.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (std::isnan(s[a]) || std::isnan(s[b])) return !std::isnan(s[a]) && std::isnan(s[b]);
    return s[a] > s[b];
  });
  std::vector<unsigned char> mask(s.size(), 0);
  for (size_t i = 0; i < keep; ++i) mask[order[i]] = 1;
  return mask;
}

TEST(TokenSelection, MatchesStableSortWithTiesAndNaN) {
  std::mt19937 rng(7);
  for (size_t tokens : {1u, 2u, 17u, 256u, 1001u}) {
    std::vector<float> s(tokens);
    for (size_t t = 0; t < tokens; ++t) {
      const unsigned kind = rng() % 10;
      s[t] = kind == 0 ? std::nanf("") : kind == 1 ? -0.0f : static_cast<float>(rng() % 5);
    }
    for (size_t keep : {size_t{0}, size_t{1}, tokens / 3, tokens / 2, tokens - 1, tokens}) {
      std::vector<unsigned char> mask(tokens, 0xAA);
      selectTopTokens(s.data(), tokens, keep, mask.data());
      EXPECT_EQ(mask, sortedReference(s, keep)) << "tokens " << tokens << " keep " << keep;
    }
  }
}

TEST(TokenSelection, EqualScoresKeepTheFirstTokens) {
  std::vector<float> s = {0.0f, -0.0f, 0.0f, -0.0f, 0.0f};
  std::vector<unsigned char> mask(5);
  selectTopTokens(s.data(), 5, 2, mask.data());
  EXPECT_EQ(mask, (std::vector<unsigned char>{1, 1, 0, 0, 0}));
  s = {std::nanf(""), -INFINITY, std::nanf("")};
  selectTopTokens(s.data(), 3, 2, mask.data());
  EXPECT_EQ(std::vector<unsigned char>(mask.begin(), mask.begin() + 3),
            (std::vector<unsigned char>{1, 1, 0}));
}

TEST(TokenSelection, SumsInRankOrder) {
  // (1e8 + 1) - 1e8 in f32 is 0, 1e8 - 1e8 + 1 is 1: the order is fixed.
  const std::vector<float> all = {1e8f, 1.0f, -1e8f};  // three ranks, one token
  float out = -1;
  sumScoresInRankOrder(all.data(), 3, 1, &out);
  EXPECT_EQ(out, (1e8f + 1.0f) + -1e8f);
}

TEST(TokenRows, GatherScatterAndPrune) {
  const size_t tokens = 5, hidden = 3;
  std::vector<float> tensor(tokens * hidden);
  std::iota(tensor.begin(), tensor.end(), 1.0f);
  const std::vector<unsigned char> mask = {0, 1, 0, 0, 7};
  const std::vector<size_t> rows = keptTokens(mask.data(), tokens);
  ASSERT_EQ(rows, (std::vector<size_t>{1, 4}));
  std::vector<float> packed(rows.size() * hidden);
  gatherRows(tensor.data(), rows, hidden * 4, packed.data());
  EXPECT_EQ(packed, (std::vector<float>{4, 5, 6, 13, 14, 15}));
  for (float& v : packed) v = -v;
  scatterRows(packed.data(), rows, hidden * 4, tensor.data());
  std::vector<float> kept = tensor;
  applyPrunePolicy(spcclPruneKeepLocal, mask.data(), tokens, hidden * 4, kept.data());
  EXPECT_EQ(kept, tensor);
  applyPrunePolicy(spcclPruneZero, mask.data(), tokens, hidden * 4, tensor.data());
  EXPECT_EQ(tensor, (std::vector<float>{0, 0, 0, -4, -5, -6, 0, 0, 0, 0, 0, 0, -13, -14, -15}));
}

}  // namespace
}  // namespace spccl::compress

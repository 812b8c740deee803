#include "compress/token_selection.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace spccl::compress {

void sumScoresInRankOrder(const float* all, int nranks, size_t tokens, float* out) {
  if (tokens == 0) return;
  std::memcpy(out, all, tokens * sizeof(float));
  for (int r = 1; r < nranks; ++r) {
    const float* theirs = all + static_cast<size_t>(r) * tokens;
    for (size_t t = 0; t < tokens; ++t) out[t] += theirs[t];
  }
}

void selectTopTokens(const float* scores, size_t tokens, size_t keep, unsigned char* mask) {
  if (tokens == 0) return;
  std::memset(mask, 0, tokens);
  keep = std::min(keep, tokens);
  if (keep == 0) return;
  if (keep == tokens) {
    std::memset(mask, 1, tokens);
    return;
  }
  // A strict total order (NaN would break std::nth_element's contract).
  auto ranksAbove = [scores](size_t a, size_t b) {
    const float x = scores[a], y = scores[b];
    const bool xNan = std::isnan(x), yNan = std::isnan(y);
    if (xNan != yNan) return yNan;
    if (!xNan && x != y) return x > y;
    return a < b;
  };
  std::vector<size_t> order(tokens);
  std::iota(order.begin(), order.end(), size_t{0});
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                   ranksAbove);
  for (size_t i = 0; i < keep; ++i) mask[order[i]] = 1;
}

}  // namespace spccl::compress

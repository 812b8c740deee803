// The token mask (src/compress/token_rows.h, token_selection.h): a mask
// call's user mask (any bytes; non-zero keeps the row), the kept rows
// packed and unpacked, the prune policy, and the top-k choice from summed
// scores (NaN and infinities included: another rank's scores are any
// floats). Input: [tokens u16][rowBytes u8][policy u8][keep u16][scores
// or mask bytes...].
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "compress/token_rows.h"
#include "compress/token_selection.h"
#include "fuzz_support.h"

using namespace spccl;
using namespace spccl::compress;

namespace {

void maskRows(fuzz::Input& in, size_t tokens, size_t rowBytes, spcclPrunePolicy_t policy) {
  std::vector<unsigned char> mask = in.bytes(tokens);
  mask.resize(tokens, 0);
  const std::vector<size_t> rows = keptTokens(mask.data(), tokens);
  SPCCL_FUZZ_CHECK(rows.size() ==
                   static_cast<size_t>(tokens - std::count(mask.begin(), mask.end(), 0)));
  for (size_t i = 0; i < rows.size(); ++i) {
    SPCCL_FUZZ_CHECK(rows[i] < tokens && mask[rows[i]] != 0);
    SPCCL_FUZZ_CHECK(i == 0 || rows[i] > rows[i - 1]);
  }
  // token_allreduce.cc packs only a non-empty count of elements.
  if (rows.empty() || rowBytes == 0) return;
  std::vector<unsigned char> tensor(tokens * rowBytes);
  for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<unsigned char>(i * 31 + 7);
  // Exactly rows.size() rows packed: nothing written past them.
  std::vector<unsigned char> packed(rows.size() * rowBytes);
  gatherRows(tensor.data(), rows, rowBytes, packed.data());
  std::vector<unsigned char> back(tokens * rowBytes, 0xee);
  scatterRows(packed.data(), rows, rowBytes, back.data());
  for (size_t t = 0; t < tokens; ++t) {
    const bool kept = mask[t] != 0;
    for (size_t b = 0; b < rowBytes; ++b)
      SPCCL_FUZZ_CHECK(back[t * rowBytes + b] == (kept ? tensor[t * rowBytes + b] : 0xee));
  }
  std::vector<unsigned char> pruned = tensor;
  applyPrunePolicy(policy, mask.data(), tokens, rowBytes, pruned.data());
  for (size_t t = 0; t < tokens; ++t)
    for (size_t b = 0; b < rowBytes; ++b) {
      const size_t i = t * rowBytes + b;
      const bool zeroed = policy == spcclPruneZero && mask[t] == 0;
      SPCCL_FUZZ_CHECK(pruned[i] == (zeroed ? 0 : tensor[i]));
    }
}

void topTokens(fuzz::Input& in, size_t tokens, size_t keep) {
  std::vector<float> scores(tokens, 0.0f);
  for (float& s : scores) s = in.take<float>();
  std::vector<unsigned char> mask(tokens, 0xcc);
  selectTopTokens(scores.data(), tokens, keep, mask.data());
  // The order selectTopTokens documents, by a full sort.
  std::vector<size_t> order(tokens);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const float x = scores[a], y = scores[b];
    if (std::isnan(x) != std::isnan(y)) return std::isnan(y);
    if (!std::isnan(x) && x != y) return x > y;
    return a < b;
  });
  std::vector<unsigned char> expected(tokens, 0);
  for (size_t i = 0; i < std::min(keep, tokens); ++i) expected[order[i]] = 1;
  SPCCL_FUZZ_CHECK(mask == expected);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const size_t tokens = in.take<uint16_t>() % 1024;
  const size_t rowBytes = in.take<uint8_t>() % 17;
  const uint8_t policy = in.take<uint8_t>();
  const size_t keep = in.take<uint16_t>() % 1100;
  if (policy & 0x80)
    topTokens(in, tokens, keep);
  else
    maskRows(in, tokens, rowBytes, (policy & 1) ? spcclPruneKeepLocal : spcclPruneZero);
  return 0;
}

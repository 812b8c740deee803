#include "compress/token_agreement.h"

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

#include "base/check.h"
#include "coll/small_allgather.h"
#include "compress/configuration_agreement.h"

namespace spccl::compress {
namespace {

struct TokenHeader {
  ConfigurationHeader config;  // zeros when uncompressed
  int32_t topk = 0;            // 1: top-k call, 0: mask call
  int32_t compressed = 0;
  uint64_t tokens = 0;
  uint64_t hidden = 0;
  uint64_t kept = 0;      // keep, or the mask's number of kept tokens
  uint64_t maskHash = 0;  // FNV-1a of the mask; 0 for top-k
  bool operator==(const TokenHeader&) const = default;

  std::string describe() const {
    char text[160];
    std::snprintf(text, sizeof(text), "%s, tokens %" PRIu64 ", hidden %" PRIu64 ", %s %" PRIu64,
                  topk ? "top-k" : "mask", tokens, hidden, topk ? "keep" : "kept", kept);
    std::string s = text;
    if (!topk) {
      std::snprintf(text, sizeof(text), ", mask hash 0x%016" PRIx64, maskHash);
      s += text;
    }
    return s + (compressed ? ", cfg (" + config.describe() + ")" : ", cfg NULL");
  }
};

// docs/compressed.md and compressed_all_reduce_perf's byte formula count
// 64 bytes per peer.
static_assert(sizeof(TokenHeader) == 64);

uint64_t fnv1a(const unsigned char* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace

spcclResult_t agreeOnTokenCall(CollContext& ctx, const TokenCall& call, const unsigned char* mask) {
  TokenHeader mine;
  if (call.compressed) mine.config = ConfigurationHeader::of(call.compression);
  mine.topk = call.isTopk() ? 1 : 0;
  mine.compressed = call.compressed ? 1 : 0;
  mine.tokens = call.tokens;
  mine.hidden = call.hidden;
  if (call.isTopk()) {
    mine.kept = call.keep;
  } else {
    mine.kept = static_cast<uint64_t>(std::count(mask, mask + call.tokens, 1));
    mine.maskHash = fnv1a(mask, call.tokens);
  }
  std::vector<TokenHeader> all(static_cast<size_t>(ctx.nranks()));
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), all.data()));
  for (int r = 1; r < ctx.nranks(); ++r) {
    if (all[r] == all[0]) continue;
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: ranks disagree on the call: rank %d has (%s) but rank 0 has (%s); the "
                      "call fails on every rank",
                      call.name, r, all[r].describe().c_str(), all[0].describe().c_str());
  }
  return spcclSuccess;
}

}  // namespace spccl::compress

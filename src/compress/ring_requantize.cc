#include <algorithm>
#include <vector>

#include "base/check.h"
#include "coll/schedule_support.h"
#include "compress/compressed_schedules.h"
#include "compress/schedule_parts.h"

namespace spccl::compress {

// Rank r sends chunk (r - s) at reduce-scatter step s and ends owning
// chunk r + 1, whose codes it sends first in the all-gather (the dense
// ring's order, ring_schedules.cc).
spcclResult_t ringCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const int n = ctx.nranks(), me = ctx.rank();
  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  auto chunkAt = [n](int c) { return ((c % n) + n) % n; };
  const ChunkLayout layout{call.count, call.spec.blockSize, n};
  const std::vector<size_t> offsets = encodedOffsets(call, layout);
  size_t widest = 0, longest = 0;
  for (int c = 0; c < n; ++c) {
    widest = std::max(widest, offsets[c + 1] - offsets[c]);
    longest = std::max(longest, layout.length(c));
  }
  char *codes = nullptr, *received = nullptr, *accBytes = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, std::max(offsets[n], 2 * widest), kScratchCodes, &codes));
  SPCCL_CHECK(acquireScratch(ctx, widest, kScratchReceived, &received));
  SPCCL_CHECK(acquireScratch(ctx, longest * sizeof(float), kScratchAccumulator, &accBytes));
  auto* region = reinterpret_cast<unsigned char*>(codes);
  auto* incoming = reinterpret_cast<unsigned char*>(received);
  float* acc = reinterpret_cast<float*>(accBytes);
  auto encodedSize = [&](int c) { return offsets[c + 1] - offsets[c]; };

  // 1. Reduce-scatter; the partial sum is decoded, my input added in f32,
  // and re-quantized before it moves on.
  unsigned char* outgoing = region;
  // Alone, the input is quantized only as the owned sum (step 2): encoding
  // it here too would spend the error-feedback residual twice.
  if (n > 1) encodeInput(ctx, call, layout.begin(me), layout.length(me), outgoing);
  for (int s = 0; s < n - 1; ++s) {
    const int sent = chunkAt(me - s), arriving = chunkAt(me - s - 1);
    size_t got = 0;
    SPCCL_CHECK(ctx.sendRecv(right, outgoing, encodedSize(sent), left, incoming,
                             encodedSize(arriving), &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, left, got, encodedSize(arriving)));
    sumInputAndDecoding(ctx, call, layout, arriving, incoming, acc);
    if (s < n - 2) encodePartialSum(ctx, call, layout, arriving, acc, outgoing);
  }

  // 2. The owned chunk (the last to arrive; my whole input when n == 1).
  const int owned = chunkAt(me + 1);
  if (n == 1) loadInputChunk(ctx, call, layout, owned, acc);
  finishOwnedSum(ctx, call, layout, owned, acc, region + offsets[owned]);

  // 3. Ring all-gather of the owners' codes, forwarded unchanged.
  for (int s = 0; s < n - 1; ++s) {
    const int sent = chunkAt(me + 1 - s), arriving = chunkAt(me - s);
    size_t got = 0;
    SPCCL_CHECK(ctx.sendRecv(right, region + offsets[sent], encodedSize(sent), left,
                             region + offsets[arriving], encodedSize(arriving), &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, left, got, encodedSize(arriving)));
    decodeIntoOutput(ctx, call, layout.begin(arriving), layout.length(arriving),
                     region + offsets[arriving]);
  }
  return spcclSuccess;
}

}  // namespace spccl::compress

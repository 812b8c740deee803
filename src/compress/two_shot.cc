#include <vector>

#include "base/check.h"
#include "coll/schedule_support.h"
#include "coll/small_allgather.h"
#include "compress/compressed_schedules.h"
#include "compress/schedule_parts.h"

namespace spccl::compress {

spcclResult_t twoShotCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const int n = ctx.nranks(), me = ctx.rank();
  const ChunkLayout layout{call.count, call.spec.blockSize, n};
  const std::vector<size_t> offsets = encodedOffsets(call, layout);
  const size_t mine = layout.encodedBytes(call.spec, me);
  char *codes = nullptr, *received = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, offsets[n], kScratchCodes, &codes));
  SPCCL_CHECK(acquireScratch(ctx, mine * static_cast<size_t>(n), kScratchReceived, &received));
  auto* region = reinterpret_cast<unsigned char*>(codes);
  auto* incoming = reinterpret_cast<unsigned char*>(received);
  const std::vector<int> peers = peersInTurn(me, n);

  // 1. Reduce-scatter: every peer's chunk of my input, quantized once, goes
  // straight to its owner; the receives are posted first, and each send
  // leaves as soon as its chunk is encoded.
  std::vector<PeerRequest> fromPeer(n), toPeer(n);
  for (int p : peers) SPCCL_CHECK(ctx.irecv(p, incoming + p * mine, mine, &fromPeer[p]));
  for (int p : peers) {
    encodeInputChunk(ctx, call, layout, p, region + offsets[p]);
    SPCCL_CHECK(ctx.isend(p, region + offsets[p], offsets[p + 1] - offsets[p], &toPeer[p]));
  }
  // My input, then the peers' decodings in rank order, whatever the
  // arrival order: reproducible run to run.
  std::vector<const unsigned char*> decodings;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    size_t got = 0;
    SPCCL_CHECK(ctx.wait(&fromPeer[p], &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, p, got, mine));
    decodings.push_back(incoming + p * mine);
  }
  for (int p : peers) SPCCL_CHECK(ctx.wait(&toPeer[p]));

  // 2. The owned sum quantized once, and decoded into the output in the
  // same pass; all-gather of the codes. The output is written only now,
  // after every read of the input (in place is fine). f32: summed in that
  // pass too, a segment at a time (no accumulator); else through one.
  if (call.type == spcclFloat32) {
    reduceOwnedSum(ctx, call, layout, me, decodings, region + offsets[me]);
  } else {
    char* accBytes = nullptr;
    SPCCL_CHECK(
        acquireScratch(ctx, layout.length(me) * sizeof(float), kScratchAccumulator, &accBytes));
    float* acc = reinterpret_cast<float*>(accBytes);
    if (decodings.empty()) loadInputChunk(ctx, call, layout, me, acc);
    for (size_t d = 0; d < decodings.size(); ++d) {
      if (d == 0)
        sumInputAndDecoding(ctx, call, layout, me, decodings[d], acc);
      else
        ctx.kernels().dequantizeAdd(call.spec, decodings[d], layout.length(me), acc);
    }
    finishOwnedSum(ctx, call, layout, me, acc, region + offsets[me]);
  }
  for (int p : peers)
    SPCCL_CHECK(ctx.irecv(p, region + offsets[p], offsets[p + 1] - offsets[p], &fromPeer[p]));
  for (int p : peers) SPCCL_CHECK(ctx.isend(p, region + offsets[me], mine, &toPeer[p]));
  for (int p : peers) {
    size_t got = 0;
    SPCCL_CHECK(ctx.wait(&fromPeer[p], &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, p, got, offsets[p + 1] - offsets[p]));
    decodeIntoOutput(ctx, call, layout, p, region + offsets[p]);
  }
  for (int p : peers) SPCCL_CHECK(ctx.wait(&toPeer[p]));
  return spcclSuccess;
}

}  // namespace spccl::compress

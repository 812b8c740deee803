#include <algorithm>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "coll/schedule_support.h"
#include "coll/small_allgather.h"
#include "compress/chunk_pieces.h"
#include "compress/compressed_schedules.h"
#include "compress/owned_sum_placement.h"
#include "compress/schedule_parts.h"

namespace spccl::compress {
namespace {

// A chunk's encoding as its pieces' standalone encodings back to back
// (chunk_pieces.h), so that the owner can sum and send it a piece at a time.
// With an encoder (device memory), the pieces are queued to be encoded
// where they lie (out is filled once the encoder completes).
spcclResult_t encodePieces(const CollContext& ctx, const CompressedCall& call,
                           const ChunkPieces& pieces, unsigned char* out) {
  for (size_t i = 0; i < pieces.count(); ++i) {
    unsigned char* at = out + pieces.encodedOffset(call.spec, i);
    if (call.encoder != nullptr)
      SPCCL_CHECK(call.encoder->encode(pieces.first(i), pieces.size(i), at));
    else
      encodeInput(ctx, call, pieces.first(i), pieces.size(i), at);
  }
  return spcclSuccess;
}

// recvbuff's elements [begin, begin + length) = the decoding of codes:
// on the CPU, or by the call's decoder where recvbuff is device memory.
spcclResult_t writeOutput(const CollContext& ctx, const CompressedCall& call, size_t begin,
                          size_t length, const unsigned char* codes) {
  if (call.decoder != nullptr) return call.decoder->decode(begin, length, codes);
  decodeIntoOutput(ctx, call, begin, length, codes);
  return spcclSuccess;
}

// Whether the owned sum on the CPU goes through an f32 accumulator instead
// of the one-pass reduceOwnedSum: f16 and bf16 (widened, then rounded once
// on output).
bool ownedSumThroughAccumulator(const CompressedCall& call) { return call.type != spcclFloat32; }

// *acc (scratch) = elements [begin, begin + length) of the owned sum in
// f32: my input widened, plus the peers' decodings in rank order (the bits
// of loadInputChunk then dequantizeAdd, which f32's dequantizeOnto and
// reduceOwnedSum also give), divided by n for avg (before quantizing, as
// finishOwnedSum).
spcclResult_t accumulateOwnedSum(CollContext& ctx, const CompressedCall& call, size_t begin,
                                 size_t length, const std::vector<const unsigned char*>& decodings,
                                 float** acc) {
  char* accBytes = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, length * sizeof(float), kScratchAccumulator, &accBytes));
  *acc = reinterpret_cast<float*>(accBytes);
  std::memset(*acc, 0, length * sizeof(float));
  ctx.kernels().widenAdd[call.type](
      *acc, static_cast<const unsigned char*>(call.sendbuff) + begin * spcclTypeSize(call.type),
      length);
  for (const unsigned char* decoding : decodings)
    ctx.kernels().dequantizeAdd(call.spec, decoding, length, *acc);
  if (call.op == spcclAvg) ctx.kernels().divide[spcclFloat32](*acc, length, ctx.nranks());
  return spcclSuccess;
}

// The owned sum through an f32 accumulator (accumulateOwnedSum), encoded
// once into out, with the residual. The caller writes the output from out.
spcclResult_t sumThroughAccumulator(CollContext& ctx, const CompressedCall& call, size_t begin,
                                    size_t length,
                                    const std::vector<const unsigned char*>& decodings,
                                    unsigned char* out) {
  float* acc = nullptr;
  SPCCL_CHECK(accumulateOwnedSum(ctx, call, begin, length, decodings, &acc));
  ctx.kernels().quantize[spcclFloat32](call.spec, acc, length, out,
                                       call.residual ? call.residual + begin : nullptr);
  return spcclSuccess;
}

// Owned piece i's codes (bytes at codes) sent to every peer at once.
spcclResult_t sendOwnedPiece(CollContext& ctx, const std::vector<int>& peers,
                             const unsigned char* codes, size_t bytes, size_t i,
                             std::vector<std::vector<PeerRequest>>& gatherTo) {
  for (int p : peers) SPCCL_CHECK(ctx.isend(p, codes, bytes, &gatherTo[p][i]));
  return spcclSuccess;
}

}  // namespace

spcclResult_t twoShotCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const int n = ctx.nranks(), me = ctx.rank();
  const ChunkLayout layout{call.count, call.spec.blockSize, n};
  const std::vector<size_t> offsets = encodedOffsets(call, layout);
  const size_t mine = layout.encodedBytes(call.spec, me);
  std::vector<ChunkPieces> pieces(n);
  for (int c = 0; c < n; ++c) pieces[c] = piecesOf(call, layout, c, ctx.compressPieceBytes());
  const ChunkPieces& owned = pieces[me];
  char *codes = nullptr, *received = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, offsets[n], kScratchCodes, &codes));
  SPCCL_CHECK(acquireScratch(ctx, mine * static_cast<size_t>(n), kScratchReceived, &received));
  auto* region = reinterpret_cast<unsigned char*>(codes);
  auto* incoming = reinterpret_cast<unsigned char*>(received);
  const std::vector<int> peers = peersInTurn(me, n);
  if ((call.decoder != nullptr || call.encoder != nullptr) && call.rows != nullptr)
    return SPCCL_FAIL(spcclInternalError, "%s: device codecs need a call without rows", call.name);
  if (call.encoder != nullptr && call.decoder == nullptr)
    return SPCCL_FAIL(spcclInternalError, "%s: an encoder writes the owned sum with its decoder",
                      call.name);
  // With an encoder, the owned sum is formed where it crosses fewer bytes
  // (owned_sum_placement.h): on the device, or here from the encoder's
  // host copy of each owned piece.
  const bool ownedOnDevice = call.encoder != nullptr && ownedSumOnDevice(call, layout, me);
  // With an encoder that holds the residual and the owned sum here, the
  // encoder encodes the sum (and decodes the output) where the residual
  // lies.
  const bool encodedByEncoder = call.encoder != nullptr && call.residual != nullptr;
  // With a decoder and the owned sum encoded here, the sum's host decoding
  // is a piece's throwaway: the decoder writes the output from the codes.
  float* decoded = nullptr;
  if (call.decoder != nullptr && !ownedOnDevice && !encodedByEncoder &&
      !ownedSumThroughAccumulator(call)) {
    char* bytes = nullptr;
    SPCCL_CHECK(acquireScratch(ctx, owned.pieceLength * sizeof(float), kScratchDecoded, &bytes));
    decoded = reinterpret_cast<float*>(bytes);
  }

  // 1. Reduce-scatter: every peer's chunk of my input, quantized once, goes
  // straight to its owner as one message; the receives are posted first,
  // and each send leaves as soon as its chunk is encoded. With an encoder
  // (device memory), the next chunk is queued on the device before this
  // one is sent, so its encode and copy run while this one goes out. The
  // owned chunk stays where it lies (summed there in step 3).
  std::vector<PeerRequest> fromPeer(n), toPeer(n);
  for (int p : peers) SPCCL_CHECK(ctx.irecv(p, incoming + p * mine, mine, &fromPeer[p]));
  auto queueOnDevice = [&](size_t k) {
    if (k >= peers.size()) return spcclSuccess;
    return encodePieces(ctx, call, pieces[peers[k]], region + offsets[peers[k]]);
  };
  if (call.encoder != nullptr) SPCCL_CHECK(queueOnDevice(0));
  for (size_t k = 0; k < peers.size(); ++k) {
    const int p = peers[k];
    if (call.encoder != nullptr) {
      SPCCL_CHECK(call.encoder->complete());
      SPCCL_CHECK(queueOnDevice(k + 1));
    } else {
      SPCCL_CHECK(encodePieces(ctx, call, pieces[p], region + offsets[p]));
    }
    SPCCL_CHECK(ctx.isend(p, region + offsets[p], offsets[p + 1] - offsets[p], &toPeer[p]));
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    size_t got = 0;
    SPCCL_CHECK(ctx.wait(&fromPeer[p], &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, p, got, mine));
  }
  for (int p : peers) SPCCL_CHECK(ctx.wait(&toPeer[p]));
  if (call.encoder != nullptr) SPCCL_CHECK(call.encoder->complete());

  // 2. All-gather receives, one per (peer, piece), posted before the owned
  // sum so that the peers' pieces land while I sum mine. region's peer
  // chunks are free again: their reduce-scatter sends completed above.
  std::vector<std::vector<PeerRequest>> gatherFrom(n), gatherTo(n);
  for (int p : peers) {
    gatherFrom[p].resize(pieces[p].count());
    gatherTo[p].resize(owned.count());
    for (size_t i = 0; i < pieces[p].count(); ++i)
      SPCCL_CHECK(ctx.irecv(p, region + offsets[p] + pieces[p].encodedOffset(call.spec, i),
                            pieces[p].encodedBytes(call.spec, i), &gatherFrom[p][i]));
  }

  // 3. The owned sum, a piece at a time: quantized once and decoded into
  // the output in the same pass, and sent to every peer at once, so the
  // link carries piece i while piece i+1 is summed. The output is written
  // only now, after every read of the input (in place is fine). f32: summed
  // in that pass too (no accumulator), my input then the peers' decodings
  // in rank order, whatever the arrival order: reproducible run to run.
  // f16, bf16 (one piece): through an accumulator, with the same bits.
  // With an encoder (device memory), the encoder forms the same sum where
  // the input lies and writes the output from its own copy of the codes,
  // or copies the owned piece here to be summed as host memory is.
  std::vector<const unsigned char*> decodings;  // of my chunk, in rank order
  for (int p = 0; p < n; ++p)
    if (p != me) decodings.push_back(incoming + p * mine);
  std::vector<const unsigned char*> ofPiece(decodings.size());  // of piece i
  const int divisor = call.op == spcclAvg ? n : 0;
  for (size_t i = 0; i < owned.count(); ++i) {
    const size_t at = owned.encodedOffset(call.spec, i);
    for (size_t d = 0; d < decodings.size(); ++d) ofPiece[d] = decodings[d] + at;
    if (ownedOnDevice) {
      SPCCL_CHECK(call.encoder->sumOwned(owned.first(i), owned.size(i), ofPiece, divisor,
                                         region + offsets[me] + at));
      SPCCL_CHECK(sendOwnedPiece(ctx, peers, region + offsets[me] + at,
                                 owned.encodedBytes(call.spec, i), i, gatherTo));
      continue;
    }
    // The piece's input where the CPU reads it: sendbuff, or the encoder's
    // host copy (its elements from 0).
    CompressedCall summed = call;
    size_t from = owned.first(i);
    if (call.encoder != nullptr) {
      const unsigned char* copy = nullptr;
      SPCCL_CHECK(call.encoder->copyOwned(from, owned.size(i), &copy));
      summed.sendbuff = copy;
      from = 0;
    }
    if (encodedByEncoder) {
      float* acc = nullptr;
      SPCCL_CHECK(accumulateOwnedSum(ctx, summed, from, owned.size(i), ofPiece, &acc));
      SPCCL_CHECK(call.encoder->encodeOwnedSum(owned.first(i), owned.size(i), acc,
                                               region + offsets[me] + at));
      SPCCL_CHECK(sendOwnedPiece(ctx, peers, region + offsets[me] + at,
                                 owned.encodedBytes(call.spec, i), i, gatherTo));
      continue;
    }
    const bool throughAccumulator = ownedSumThroughAccumulator(call);
    if (throughAccumulator)
      SPCCL_CHECK(sumThroughAccumulator(ctx, summed, from, owned.size(i), ofPiece,
                                        region + offsets[me] + at));
    else
      reduceOwnedSum(ctx, summed, from, owned.size(i), ofPiece, region + offsets[me] + at, decoded);
    SPCCL_CHECK(sendOwnedPiece(ctx, peers, region + offsets[me] + at,
                               owned.encodedBytes(call.spec, i), i, gatherTo));
    // While the piece travels (reduceOwnedSum wrote a host output itself).
    if (throughAccumulator || call.decoder != nullptr)
      SPCCL_CHECK(writeOutput(ctx, call, owned.first(i), owned.size(i), region + offsets[me] + at));
  }

  // 4. The peers' pieces decoded into the output, in the order they were
  // sent (piece by piece across the peers); each position has one source.
  size_t mostPieces = 0;
  for (int p : peers) mostPieces = std::max(mostPieces, pieces[p].count());
  for (size_t i = 0; i < mostPieces; ++i) {
    for (int p : peers) {
      if (i >= pieces[p].count()) continue;
      size_t got = 0;
      SPCCL_CHECK(ctx.wait(&gatherFrom[p][i], &got));
      SPCCL_CHECK(checkEncodedSize(ctx, call, p, got, pieces[p].encodedBytes(call.spec, i)));
      SPCCL_CHECK(writeOutput(ctx, call, pieces[p].first(i), pieces[p].size(i),
                              region + offsets[p] + pieces[p].encodedOffset(call.spec, i)));
    }
  }
  for (int p : peers) SPCCL_CHECK(ctx.waitAll(gatherTo[p]));
  // The decodes were queued as the codes came (each runs while the next
  // piece arrives); the output is complete only now.
  if (call.decoder != nullptr) SPCCL_CHECK(call.decoder->finish());
  return spcclSuccess;
}

}  // namespace spccl::compress

// The steps both compressed schedules (two_shot.cc, ring_requantize.cc)
// are made of: encode an input chunk or a partial sum for sending, finish
// the chunk a rank owns (avg, then quantized once), decode codes into the
// output, and the scratch buffers that hold them. Error feedback happens
// inside every encode: each quantization this rank performs adds what it
// lost to the rank's residual at those positions, so that the next call
// sends it (kernels.h QuantizeFn).
#pragma once

#include <cstddef>
#include <vector>

#include "compress/chunk_layout.h"
#include "compress/compressed_allreduce.h"
#include "runtime/coll_context.h"

namespace spccl::compress {

// CollContext::scratch slots of the compressed schedules (apart from the
// dense schedules' 0..2, which the dense fallback may use).
enum CompressScratchSlot : int {
  kScratchCodes = 16,        // encoded chunks, one region per chunk
  kScratchReceived = 17,     // encodings that arrive to be summed
  kScratchAccumulator = 18,  // the f32 sum of one chunk
  // The token top-k path (token_allreduce.cc), around the schedules:
  kScratchTokenRows = 19,      // the kept rows, packed
  kScratchTokenResidual = 20,  // their error-feedback residuals, packed
  kScratchTokenScores = 21,    // every rank's scores
  kScratchDecoded = 22,        // a piece's host decoding, where call.decoder writes the output
};

// Byte offsets of each chunk's encoding in a buffer holding all of them.
std::vector<size_t> encodedOffsets(const CompressedCall& call, const ChunkLayout& layout);

// call.sendbuff's elements [begin, begin + length) (plus the residual)
// encoded into out: a chunk, or a piece of one (chunk_pieces.h).
void encodeInput(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                 unsigned char* out);
// A partial sum of elements [begin, begin + length) (f32; plus the
// residual) encoded into out.
void encodePartialSum(const CollContext& ctx, const CompressedCall& call, size_t begin,
                      size_t length, const float* acc, unsigned char* out);
// The complete sum of elements [begin, begin + length), the chunk this
// rank owns: divided by divisor where not 0 (avg's n), then encoded once,
// into out, and the decoding of out written to call.recvbuff's elements
// (in the same pass where the output is f32).
void finishOwnedSum(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    int divisor, float* acc, unsigned char* out);
// f32 calls: elements [begin, begin + length) of the chunk this rank owns
// (all of it, or a piece) summed from call.sendbuff's and the decodings
// (encodings of just those elements, in their order, as
// sumInputAndDecoding then dequantizeAdd), then finished as
// finishOwnedSum, in one pass with no accumulator (kernels.h
// reduceQuantizeDecode). decoded: not nullptr, the decoding goes there
// (length floats) instead of to call.recvbuff (call.decoder writes that).
void reduceOwnedSum(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    const std::vector<const unsigned char*>& decodings, unsigned char* out,
                    float* decoded = nullptr);
// acc = call.sendbuff's elements [begin, begin + length) widened to f32
// (not for a call on rows).
void loadInputChunk(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    float* acc);
// acc = call.sendbuff's elements [begin, begin + length) widened to f32
// plus the decoding of codes: loadInputChunk then dequantizeAdd, in one
// pass where the input is f32.
void sumInputAndDecoding(const CollContext& ctx, const CompressedCall& call, size_t begin,
                         size_t length, const unsigned char* codes, float* acc);
// call.recvbuff's elements [begin, begin + length) = the decoding of codes.
void decodeIntoOutput(const CollContext& ctx, const CompressedCall& call, size_t begin,
                      size_t length, const unsigned char* codes);

// A received encoding must be exactly the size the layout gives; anything
// else means the peer runs another configuration or version.
spcclResult_t checkEncodedSize(const CollContext& ctx, const CompressedCall& call, int peer,
                               size_t received, size_t expected);

}  // namespace spccl::compress

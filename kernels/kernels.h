// The data-parallel primitives every algorithm uses, behind one dispatch
// table so that a CUDA implementation (kernels/cuda) can slot in beside the
// CPU one (kernels/cpu), which is the reference the CUDA one is tested
// against. Later issues add entries (non-zero extraction, hashing, codecs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spccl.h"

namespace spccl::kernels {

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b.
// Avg reduces as Sum here; divide() finishes it.
// Semantics, identical for every implementation:
//  - integers wrap (two's complement), as NCCL;
//  - floats follow IEEE; f16/bf16 are computed in f32 and rounded to
//    nearest-even once per call;
//  - min/max propagate NaN and are symmetric: min(-0,+0) = -0,
//    max(-0,+0) = +0 whatever the operand order, so a pairwise combine
//    gives the same bits on both partners;
//  - for the same reason every NaN result (of any op, and of divide) is the
//    canonical quiet NaN, sign clear: 0x7fc00000 (f32), 0x7ff8... (f64),
//    0x7e00 (f16), 0x7fc0 (bf16).
using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);
// buf[i] = buf[i] / divisor; integers truncate toward zero.
using DivideFn = void (*)(void* buf, size_t count, int divisor);

// ---- Lossy compression codecs (AccTFM section 4.3.2; docs/algorithms.md 3) ----
// A tensor of `count` elements is cut into blocks of blockSize elements
// (the last may be shorter); each block carries its scale m = max|v| as an
// f32, and each element a code of `bits` bits: a sign bit above N = bits-1
// magnitude bits. The encoding is all scales, then all codes bit-packed
// LSB-first (code i occupies bits [i*bits, (i+1)*bits) of the code bytes).
// The magnitude code of x = |v|/m is
//  - Piecewise, Eq. (6)-(12): N clusters of width m/N; cluster k has
//    intervals U_k = U_0 2^k, U_0 = m/(N 2^(N-1)); k = min(floor(xN), N-1);
//    code = (2^N - 2^(N-k)) + round((xN - k) 2^(N-1-k)), i.e. Eq. (6)'s
//    level counted from 0 over all 2^N levels (0, U_0, ..., m).
//  - Linear, Eq. (4)-(5): code = round(x (2^N - 1)), step m/(2^N - 1).
// round() is half away from zero. Both are nearest-level quantizers, so the
// error of an element is at most m * halfStepFraction() (kernels/cpu/
// compress/quantizer_levels.h states the exact per-cluster steps).
// A block holding inf or NaN gets the scale NaN and decodes to NaN in
// every element (the dense sum would be non-finite there too; a block-wide
// NaN cannot go unnoticed); its error-feedback residual is reset to 0.
enum class Codec : uint8_t { Piecewise = 0, Linear = 1 };

struct QuantizerSpec {
  Codec codec = Codec::Piecewise;
  int bits = 4;            // 2..8, sign included
  size_t blockSize = 256;  // elements per scale, >= 1
};

constexpr int kMinQuantizerBits = 2;
constexpr int kMaxQuantizerBits = 8;

inline size_t quantizedBlockCount(const QuantizerSpec& spec, size_t count) {
  return (count + spec.blockSize - 1) / spec.blockSize;
}
inline size_t packedCodeBytes(int bits, size_t count) {
  return (count * static_cast<size_t>(bits) + 7) / 8;
}
// Size of the encoding of count elements.
inline size_t quantizedBytes(const QuantizerSpec& spec, size_t count) {
  return quantizedBlockCount(spec, count) * sizeof(float) + packedCodeBytes(spec.bits, count);
}
// The largest |error| of an element, as a fraction of its block's scale:
// half the widest step (piecewise: the outer cluster's U_(N-1) = m/N;
// linear: m/(2^N - 1)).
inline double halfStepFraction(Codec codec, int bits) {
  const int n = bits - 1;
  return codec == Codec::Piecewise ? 0.5 / n : 0.5 / static_cast<double>((1 << n) - 1);
}

// out gets quantizedBytes(spec, count) bytes encoding in[0..count). With a
// residual (error feedback; f32, count entries) the encoded value is
// in[i] + residual[i], and residual[i] becomes that value minus its decoding.
using QuantizeFn = void (*)(const QuantizerSpec& spec, const void* in, size_t count,
                            unsigned char* out, float* residual);
// out[i] = the decoding of element i, rounded once to the storage type.
using DequantizeFn = void (*)(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                              void* out);
// acc[i] += the decoding of element i (f32 accumulation, no rounding to a
// narrower type).
using DequantizeAddFn = void (*)(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                                 float* acc);
// acc[i] += in[i] widened to f32.
using WidenAddFn = void (*)(float* acc, const void* in, size_t count);

// f32 elements read and written where they lie: element i of a run is
// base[first + i] when rows is nullptr, else, with first + i = j*hidden + k,
// base[rows[j]*hidden + k] (token top-k's kept rows, docs/algorithms.md 3.4,
// without packing them first). The compressed schedules run on runs.
struct F32Run {
  float* base = nullptr;
  const size_t* rows = nullptr;
  size_t hidden = 0;
  size_t first = 0;
  // An output run of rows may also zero the rows it skips (token top-k's
  // spcclPruneZero): tokens != 0 means base is [tokens x hidden] with kept
  // (the length of rows) rows kept, and writing a kept row's first element
  // zeroes the pruned rows before it, writing the last kept row's last
  // element those after it. Sources ignore both.
  size_t tokens = 0;
  size_t kept = 0;
  // An output run of rows written with non-temporal stores (an output far
  // larger than the caches: streaming_stores.h).
  bool stream = false;
};
// quantize (no residual) and dequantize of f32, on runs: the same bytes
// and values as on the run's elements packed.
using QuantizeRunFn = void (*)(const QuantizerSpec& spec, const F32Run& in, size_t count,
                               unsigned char* out);
using DequantizeRunFn = void (*)(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                                 const F32Run& out);
// quantize of f32 (residual as there) that also writes each element's
// decoding to a run, the bits dequantize would give: a chunk encoded and
// decoded into the output in one pass (the owned sum of a schedule).
using QuantizeDecodeFn = void (*)(const QuantizerSpec& spec, const float* in, size_t count,
                                  unsigned char* out, float* residual, const F32Run& decoded);
// acc[i] = (0 + base's element i) + the decoding of element i: the bits of
// an accumulator zeroed, widenAdd-ed with base, then dequantizeAdd-ed, in
// one pass (a schedule's first decoding onto its own input).
using DequantizeOntoFn = void (*)(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                                  const F32Run& base, float* acc);

// The sum a schedule's owner forms of its chunk, encoded and decoded in
// one pass: element i's value is (((0 + base's element i) + decoding 0 of
// i) + decoding 1 of i) + ..., the decodings in the order given (the bits
// of dequantizeOnto with the first, then dequantizeAdd with each other),
// divided by divisor where it is not 0 (avg, as divide()); then as
// quantizeDecode. The chunk's sum is formed a segment at a time in cache:
// no f32 accumulator of the whole chunk is written and re-read per peer.
using ReduceQuantizeDecodeFn = void (*)(const QuantizerSpec& spec, const F32Run& base,
                                        const unsigned char* const* decodings, int decodingCount,
                                        int divisor, size_t count, unsigned char* out,
                                        float* residual, const F32Run& decoded);

struct KernelTable {
  const char* name;
  ReduceFn reduce[spcclNumTypes][spcclNumOps];
  DivideFn divide[spcclNumTypes];
  // Codecs: entries for f32, f16 and bf16; nullptr for the other types.
  QuantizeFn quantize[spcclNumTypes];
  DequantizeFn dequantize[spcclNumTypes];
  WidenAddFn widenAdd[spcclNumTypes];
  DequantizeAddFn dequantizeAdd;
  // f32 runs (fast codecs only; nullptr in the reference table).
  QuantizeRunFn quantizeRun;
  DequantizeRunFn dequantizeRun;
  DequantizeOntoFn dequantizeOnto;
  QuantizeDecodeFn quantizeDecode;
  ReduceQuantizeDecodeFn reduceQuantizeDecode;
};

const KernelTable& cpuKernels();

// Convenience wrappers that dispatch through a table.
inline void reduce(const KernelTable& table, spcclDataType_t type, spcclRedOp_t op, void* dst,
                   const void* a, const void* b, size_t count) {
  table.reduce[type][op](dst, a, b, count);
}

}  // namespace spccl::kernels

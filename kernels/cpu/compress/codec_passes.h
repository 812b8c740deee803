// The fast codecs' loops (kernels.h's contract, quantizer_levels.h's
// quantizers in their lane-wise form, magnitude_lanes.h), as always-inline
// templates: quantize_cpu.cc instantiates them inside one entry point per
// instruction set, where the compiler vectorises them for that set.
//
// Same structure as the reference (quantize_reference.cc): segments of
// kSegment codes between quantizer and packer, pieces of one block inside
// a segment. Differences that leave the bytes unchanged: a block's scale is
// taken when its first piece comes up, while it is in cache (a block reads
// and writes only its own residuals, so the order of blocks is free); the
// scale is a max over bit patterns; the error-feedback residual is updated
// in the loop that computes the codes; the quantizer's loops are free of
// branches and table lookups (the decoder may look levels up).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cstring>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/magnitude_lanes.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"
#include "kernels/kernels.h"

namespace spccl::kernels::codec_passes {

constexpr size_t kSegment = 4096;
static_assert(kSegment % 8 == 0);

// The value a codec encodes: the input, or with error feedback the input
// plus its residual, which the codec then overwrites.
template <typename Format>
struct PlainSource {
  static constexpr bool kFeedback = false;
  const typename Format::Storage* in;
  SPCCL_ALWAYS_INLINE float value(size_t i) const { return Format::load(in[i]); }
};

template <typename Format>
struct FeedbackSource {
  static constexpr bool kFeedback = true;
  const typename Format::Storage* in;
  float* residual;
  SPCCL_ALWAYS_INLINE float value(size_t i) const { return Format::load(in[i]) + residual[i]; }
};

// Where a decoding goes: stored to the output type, or added to an f32
// accumulator.
template <typename Format>
struct StoreSink {
  typename Format::Storage* out;
  SPCCL_ALWAYS_INLINE void put(size_t i, float v) const { out[i] = Format::store(v); }
};

struct AddSink {
  float* acc;
  SPCCL_ALWAYS_INLINE void put(size_t i, float v) const { acc[i] += v; }
};

// m = max|v| over [begin, end), or NaN when the block holds inf or NaN.
// Non-negative floats order as their bit patterns do, and inf and NaN lie
// above FLT_MAX's, so one integer max does both.
template <typename Source>
SPCCL_ALWAYS_INLINE float blockScale(const Source& source, size_t begin, size_t end) {
  uint32_t top = 0;
  for (size_t i = begin; i < end; ++i) {
    const uint32_t a = std::bit_cast<uint32_t>(source.value(i)) & 0x7fffffffu;
    top = a > top ? a : top;
  }
  return top > std::bit_cast<uint32_t>(FLT_MAX) ? canonicalNaN<float>() : std::bit_cast<float>(top);
}

// A level with the code's sign bit applied: signedLevels' entry
// (quantizer_levels.h) for sign << N | c.
SPCCL_ALWAYS_INLINE float withSign(float level, uint32_t sign) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(level) | sign << 31);
}

// Codes of elements [begin, begin + n) of a block with a finite scale
// m > 0; x = |v|/m by the reciprocal, or, for a subnormal scale whose
// reciprocal overflows, by division (kDivide).
template <bool kDivide, typename Source, typename Magnitude>
SPCCL_ALWAYS_INLINE void codePiece(const Source& source, const Magnitude& magnitude, float m,
                                   uint32_t signShift, size_t begin, size_t n, uint8_t* codes) {
  const float inv = 1.0f / m;
  for (size_t j = 0; j < n; ++j) {
    const float v = source.value(begin + j);
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    const float a = std::bit_cast<float>(bits & 0x7fffffffu);
    const float scaled = kDivide ? a / m : a * inv;
    const Quantized q = magnitude.quantize(scaled < 1.0f ? scaled : 1.0f);
    const uint32_t sign = bits >> 31;
    codes[j] = static_cast<uint8_t>(q.code | sign << signShift);
    if constexpr (Source::kFeedback) source.residual[begin + j] = v - m * withSign(q.level, sign);
  }
}

// All-zero and non-finite blocks code 0 and reset their residual.
template <typename Source, typename Magnitude>
SPCCL_ALWAYS_INLINE void quantizePiece(const Source& source, const Magnitude& magnitude, float m,
                                       uint32_t signShift, size_t begin, size_t n, uint8_t* codes) {
  if (!(m > 0)) {
    std::memset(codes, 0, n);
    if constexpr (Source::kFeedback)
      std::fill(source.residual + begin, source.residual + begin + n, 0.0f);
  } else if (m < FLT_MIN) {
    codePiece<true>(source, magnitude, m, signShift, begin, n, codes);
  } else {
    codePiece<false>(source, magnitude, m, signShift, begin, n, codes);
  }
}

template <typename Packer, typename Source, typename Magnitude>
SPCCL_ALWAYS_INLINE void quantizeFrom(const Source& source, const Magnitude& magnitude,
                                      const QuantizerSpec& spec, size_t count, unsigned char* out) {
  const size_t nblocks = quantizedBlockCount(spec, count);
  unsigned char* packed = out + nblocks * sizeof(float);
  const uint32_t signShift = static_cast<uint32_t>(spec.bits - 1);
  uint8_t codes[kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = i / spec.blockSize;
      const size_t blockBegin = b * spec.blockSize;
      const size_t blockEnd = std::min(count, blockBegin + spec.blockSize);
      float m;
      if (i == blockBegin) {
        m = blockScale(source, blockBegin, blockEnd);
        std::memcpy(out + b * sizeof(float), &m, sizeof(float));
      } else {  // the block began in the previous segment
        std::memcpy(&m, out + b * sizeof(float), sizeof(float));
      }
      const size_t pieceEnd = std::min(segmentEnd, blockEnd);
      quantizePiece(source, magnitude, m, signShift, i, pieceEnd - i, codes + (i - s));
      i = pieceEnd;
    }
    Packer::pack(codes, segmentEnd - s, spec.bits, packed + s / 8 * spec.bits);
  }
}

template <typename Format, typename Packer, typename Magnitude>
SPCCL_ALWAYS_INLINE void quantizeWith(const Magnitude& magnitude, const QuantizerSpec& spec,
                                      const void* input, size_t count, unsigned char* out,
                                      float* residual) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  if (residual)
    quantizeFrom<Packer>(FeedbackSource<Format>{in, residual}, magnitude, spec, count, out);
  else
    quantizeFrom<Packer>(PlainSource<Format>{in}, magnitude, spec, count, out);
}

template <typename Format, typename Packer>
SPCCL_ALWAYS_INLINE void quantize(const QuantizerSpec& spec, const void* in, size_t count,
                                  unsigned char* out, float* residual) {
  const int n = spec.bits - 1;
  if (spec.codec == Codec::Linear)
    quantizeWith<Format, Packer>(LinearLanes(n), spec, in, count, out, residual);
  else
    quantizeWith<Format, Packer>(PiecewiseLanes(n), spec, in, count, out, residual);
}

// How the decoder finds a code's level, both giving signedLevels' float:
// looked up one code at a time (TableLevels; the loop stays scalar), or
// computed lane-wise (ComputedLevels; the loop vectorises).
template <typename Magnitude>
struct ComputedLevels {
  Magnitude magnitude;
  uint32_t signShift;
  SPCCL_ALWAYS_INLINE float operator()(uint32_t c) const {
    return withSign(magnitude.level(c & ((1u << signShift) - 1)), c >> signShift);
  }
};

struct TableLevels {
  std::array<float, 256> table;
  SPCCL_ALWAYS_INLINE float operator()(uint32_t c) const { return table[c]; }
};

// sink.put(i, m * level(code)) for every element.
template <typename Packer, typename Levels, typename Sink>
SPCCL_ALWAYS_INLINE void decodeWith(const Levels& levels, const QuantizerSpec& spec,
                                    const unsigned char* in, size_t count, const Sink& sink) {
  const unsigned char* packed = in + quantizedBlockCount(spec, count) * sizeof(float);
  uint8_t codes[kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    Packer::unpack(packed + s / 8 * spec.bits, segmentEnd - s, spec.bits, codes);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = i / spec.blockSize;
      const size_t pieceEnd = std::min(segmentEnd, std::min(count, (b + 1) * spec.blockSize));
      float m;
      std::memcpy(&m, in + b * sizeof(float), sizeof(float));
      for (size_t j = i; j < pieceEnd; ++j) sink.put(j, m * levels(codes[j - s]));
      i = pieceEnd;
    }
  }
}

// Which level source each codec's decoder uses in a build.
enum class LevelSource { Table, Computed };

template <typename Packer, LevelSource kPiecewise, LevelSource kLinear, typename Sink>
SPCCL_ALWAYS_INLINE void decode(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                                const Sink& sink) {
  const int n = spec.bits - 1;
  const uint32_t signShift = static_cast<uint32_t>(n);
  const bool linear = spec.codec == Codec::Linear;
  if ((linear ? kLinear : kPiecewise) == LevelSource::Table) {
    const TableLevels levels{linear ? signedLevels(LinearMagnitude(n), spec.bits)
                                    : signedLevels(PiecewiseMagnitude(n), spec.bits)};
    decodeWith<Packer>(levels, spec, in, count, sink);
  } else if (linear) {
    decodeWith<Packer>(ComputedLevels<LinearLanes>{LinearLanes(n), signShift}, spec, in, count,
                       sink);
  } else {
    decodeWith<Packer>(ComputedLevels<PiecewiseLanes>{PiecewiseLanes(n), signShift}, spec, in,
                       count, sink);
  }
}

// The bit packer of the baseline build.
struct ScalarPacker {
  static void pack(const uint8_t* codes, size_t count, int bits, unsigned char* out) {
    packCodes(codes, count, bits, out);
  }
  static void unpack(const unsigned char* in, size_t count, int bits, uint8_t* codes) {
    unpackCodes(in, count, bits, codes);
  }
};

}  // namespace spccl::kernels::codec_passes

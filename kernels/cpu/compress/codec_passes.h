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
// branches and table lookups (the decoder may look levels up); where the
// storage type's conversion is out of line (storage_conversions.h), inputs
// and outputs are converted a segment at a time through f32 scratch.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/magnitude_lanes.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/compress/storage_conversions.h"
#include "kernels/cpu/element_format.h"
#include "kernels/kernels.h"

namespace spccl::kernels::codec_passes {

constexpr size_t kSegment = 4096;
static_assert(kSegment % 8 == 0);
// Inputs converted at a time outside a segment (the rest of a block that
// runs past it): enough that an out-of-line conversion (F16C) costs little
// per element, few enough to stay in L1.
constexpr size_t kChunk = 512;

// Element begin + j of what a codec encodes, x = a source's inputs(begin,
// n, scratch): the input, or with error feedback the input plus its
// residual (which the codec then overwrites). Every source's value().
template <bool kFeedback, typename Inputs>
SPCCL_ALWAYS_INLINE float inputWithResidual(const Inputs& x, const float* residual, size_t begin,
                                            size_t j) {
  if constexpr (kFeedback)
    return x[j] + residual[begin + j];
  else
    return x[j];
}

// The value a codec encodes: the input, or with error feedback the input
// plus its residual, which the codec then overwrites. Read a run at a time:
// value(x, begin, j) is element begin + j's, x = inputs(begin, n, scratch).
template <typename Conversion, bool kWithFeedback>
struct Source {
  static constexpr bool kFeedback = kWithFeedback;
  const typename Conversion::Storage* in;
  float* residual;  // kFeedback only

  SPCCL_ALWAYS_INLINE auto inputs(size_t begin, size_t n, float* scratch) const {
    return Conversion::inputs(in + begin, n, scratch);
  }
  template <typename Inputs>
  SPCCL_ALWAYS_INLINE float value(const Inputs& x, size_t begin, size_t j) const {
    return inputWithResidual<kFeedback>(x, residual, begin, j);
  }
};

// Where a decoding goes, a segment of n elements at a time (outputs(begin,
// n, scratch), as storage_conversions.h's; f32_runs.h has more): stored to
// the output type, or added to an f32 accumulator.
template <typename Conversion>
struct StoreSink {
  typename Conversion::Storage* out;
  SPCCL_ALWAYS_INLINE auto outputs(size_t begin, size_t, float* scratch) const {
    return Conversion::outputs(out + begin, scratch);
  }
};

struct AddSink {
  struct Outputs {
    float* acc;
    SPCCL_ALWAYS_INLINE void put(size_t j, float v) const { acc[j] += v; }
    SPCCL_ALWAYS_INLINE void finish(size_t) const {}
  };
  float* acc;
  SPCCL_ALWAYS_INLINE Outputs outputs(size_t begin, size_t, float*) const { return {acc + begin}; }
};

// Where quantize may also put each element's decoding (the quantizer has
// its level at hand): nowhere, or any sink above (f32_runs.h's).
struct NoDecoding {
  struct Outputs {
    SPCCL_ALWAYS_INLINE void put(size_t, float) const {}
    SPCCL_ALWAYS_INLINE void finish(size_t) const {}
  };
  SPCCL_ALWAYS_INLINE Outputs outputs(size_t, size_t, float*) const { return {}; }
};

// The largest of top and the magnitudes' bit patterns over [from, to), x
// holding the inputs from element base on.
template <typename Source, typename Inputs>
SPCCL_ALWAYS_INLINE uint32_t maxMagnitudeBits(const Source& source, const Inputs& x, size_t base,
                                              size_t from, size_t to, uint32_t top) {
  for (size_t i = from; i < to; ++i) {
    const uint32_t a = std::bit_cast<uint32_t>(source.value(x, base, i - base)) & 0x7fffffffu;
    top = a > top ? a : top;
  }
  return top;
}

// m = max|v| over [begin, end), or NaN when the block holds inf or NaN.
// Non-negative floats order as their bit patterns do, and inf and NaN lie
// above FLT_MAX's, so one integer max does both. The block starts in the
// segment [s, segmentEnd), whose inputs are at hand; any rest of it is
// read a chunk at a time.
template <typename Source, typename Inputs>
SPCCL_ALWAYS_INLINE float blockScale(const Source& source, const Inputs& segment, size_t s,
                                     size_t segmentEnd, size_t begin, size_t end) {
  uint32_t top = maxMagnitudeBits(source, segment, s, begin, std::min(end, segmentEnd), 0);
  float scratch[kChunk];
  for (size_t c = segmentEnd; c < end; c += kChunk) {
    const size_t n = std::min(kChunk, end - c);
    top = maxMagnitudeBits(source, source.inputs(c, n, scratch), c, c, c + n, top);
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
// reciprocal overflows, by division (kDivide). The elements lie in the
// segment whose inputs x start at element s.
template <bool kDivide, typename Source, typename Inputs, typename Magnitude, typename Decoded>
SPCCL_ALWAYS_INLINE void codePiece(const Source& source, const Inputs& x, size_t s,
                                   const Magnitude& magnitude, float m, uint32_t signShift,
                                   size_t begin, size_t n, uint8_t* codes, const Decoded& decoded) {
  const float inv = 1.0f / m;
  for (size_t j = 0; j < n; ++j) {
    const float v = source.value(x, s, begin - s + j);
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    const float a = std::bit_cast<float>(bits & 0x7fffffffu);
    const float scaled = kDivide ? a / m : a * inv;
    const Quantized q = magnitude.quantize(scaled < 1.0f ? scaled : 1.0f);
    const uint32_t sign = bits >> 31;
    codes[j] = static_cast<uint8_t>(q.code | sign << signShift);
    // m * the signed level: decode()'s expression, so its bits.
    const float level = m * withSign(q.level, sign);
    decoded.put(begin - s + j, level);
    if constexpr (Source::kFeedback) source.residual[begin + j] = v - level;
  }
}

// All-zero and non-finite blocks code 0 (decoding to m * 0: 0, or NaN)
// and reset their residual.
template <typename Source, typename Inputs, typename Magnitude, typename Decoded>
SPCCL_ALWAYS_INLINE void quantizePiece(const Source& source, const Inputs& x, size_t s,
                                       const Magnitude& magnitude, float m, uint32_t signShift,
                                       size_t begin, size_t n, uint8_t* codes,
                                       const Decoded& decoded) {
  if (!(m > 0)) {
    std::memset(codes, 0, n);
    for (size_t j = 0; j < n; ++j) decoded.put(begin - s + j, m * 0.0f);
    if constexpr (Source::kFeedback)
      std::fill(source.residual + begin, source.residual + begin + n, 0.0f);
  } else if (m < FLT_MIN) {
    codePiece<true>(source, x, s, magnitude, m, signShift, begin, n, codes, decoded);
  } else {
    codePiece<false>(source, x, s, magnitude, m, signShift, begin, n, codes, decoded);
  }
}

template <typename Packer, typename Source, typename Magnitude, typename Sink = NoDecoding>
SPCCL_ALWAYS_INLINE void quantizeFrom(const Source& source, const Magnitude& magnitude,
                                      const QuantizerSpec& spec, size_t count, unsigned char* out,
                                      const Sink& sink = {}) {
  const size_t nblocks = quantizedBlockCount(spec, count);
  unsigned char* packed = out + nblocks * sizeof(float);
  const uint32_t signShift = static_cast<uint32_t>(spec.bits - 1);
  uint8_t codes[kSegment];
  float scratch[kSegment];
  float staged[std::is_same_v<Sink, NoDecoding> ? 1 : kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    const auto segment = source.inputs(s, segmentEnd - s, scratch);
    const auto decoded = sink.outputs(s, segmentEnd - s, staged);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = i / spec.blockSize;
      const size_t blockBegin = b * spec.blockSize;
      const size_t blockEnd = std::min(count, blockBegin + spec.blockSize);
      float m;
      if (i == blockBegin) {
        m = blockScale(source, segment, s, segmentEnd, blockBegin, blockEnd);
        std::memcpy(out + b * sizeof(float), &m, sizeof(float));
      } else {  // the block began in the previous segment
        std::memcpy(&m, out + b * sizeof(float), sizeof(float));
      }
      const size_t pieceEnd = std::min(segmentEnd, blockEnd);
      quantizePiece(source, segment, s, magnitude, m, signShift, i, pieceEnd - i, codes + (i - s),
                    decoded);
      i = pieceEnd;
    }
    decoded.finish(segmentEnd - s);
    Packer::pack(codes, segmentEnd - s, spec.bits, packed + s / 8 * spec.bits);
  }
}

template <typename Conversion, typename Packer, typename Magnitude>
SPCCL_ALWAYS_INLINE void quantizeWith(const Magnitude& magnitude, const QuantizerSpec& spec,
                                      const void* input, size_t count, unsigned char* out,
                                      float* residual) {
  const auto* in = static_cast<const typename Conversion::Storage*>(input);
  if (residual)
    quantizeFrom<Packer>(Source<Conversion, true>{in, residual}, magnitude, spec, count, out);
  else
    quantizeFrom<Packer>(Source<Conversion, false>{in, nullptr}, magnitude, spec, count, out);
}

// Any source (f32_runs.h's too), each codec's magnitude quantizer, the
// decoding to a sink or nowhere.
template <typename Packer, typename Source, typename Sink = NoDecoding>
SPCCL_ALWAYS_INLINE void quantizeSource(const QuantizerSpec& spec, const Source& source,
                                        size_t count, unsigned char* out, const Sink& sink = {}) {
  const int n = spec.bits - 1;
  if (spec.codec == Codec::Linear)
    quantizeFrom<Packer>(source, LinearLanes(n), spec, count, out, sink);
  else
    quantizeFrom<Packer>(source, PiecewiseLanes(n), spec, count, out, sink);
}

template <typename Conversion, typename Packer>
SPCCL_ALWAYS_INLINE void quantize(const QuantizerSpec& spec, const void* in, size_t count,
                                  unsigned char* out, float* residual) {
  const int n = spec.bits - 1;
  if (spec.codec == Codec::Linear)
    quantizeWith<Conversion, Packer>(LinearLanes(n), spec, in, count, out, residual);
  else
    quantizeWith<Conversion, Packer>(PiecewiseLanes(n), spec, in, count, out, residual);
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

// m * level(code) into the sink for every element.
template <typename Packer, typename Levels, typename Sink>
SPCCL_ALWAYS_INLINE void decodeWith(const Levels& levels, const QuantizerSpec& spec,
                                    const unsigned char* in, size_t count, const Sink& sink) {
  const unsigned char* packed = in + quantizedBlockCount(spec, count) * sizeof(float);
  uint8_t codes[kSegment];
  float scratch[kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    Packer::unpack(packed + s / 8 * spec.bits, segmentEnd - s, spec.bits, codes);
    const auto outputs = sink.outputs(s, segmentEnd - s, scratch);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = i / spec.blockSize;
      const size_t pieceEnd = std::min(segmentEnd, std::min(count, (b + 1) * spec.blockSize));
      float m;
      std::memcpy(&m, in + b * sizeof(float), sizeof(float));
      for (size_t j = i - s; j < pieceEnd - s; ++j) outputs.put(j, m * levels(codes[j]));
      i = pieceEnd;
    }
    outputs.finish(segmentEnd - s);
  }
}

// Which level source each codec's decoder uses in a build.
enum class LevelSource { Table, Computed };

// Calls use(levels) with the level source of the spec's codec in a build.
template <LevelSource kPiecewise, LevelSource kLinear, typename Use>
SPCCL_ALWAYS_INLINE void withLevels(const QuantizerSpec& spec, const Use& use) {
  const int n = spec.bits - 1;
  const uint32_t signShift = static_cast<uint32_t>(n);
  const bool linear = spec.codec == Codec::Linear;
  // NOLINTNEXTLINE(bugprone-branch-clone): kLinear == kPiecewise in some instantiations
  if ((linear ? kLinear : kPiecewise) == LevelSource::Table) {
    use(TableLevels{linear ? signedLevels(LinearMagnitude(n), spec.bits)
                           : signedLevels(PiecewiseMagnitude(n), spec.bits)});
  } else if (linear) {
    use(ComputedLevels<LinearLanes>{LinearLanes(n), signShift});
  } else {
    use(ComputedLevels<PiecewiseLanes>{PiecewiseLanes(n), signShift});
  }
}

template <typename Packer, LevelSource kPiecewise, LevelSource kLinear, typename Sink>
SPCCL_ALWAYS_INLINE void decode(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                                const Sink& sink) {
  withLevels<kPiecewise, kLinear>(
      spec, [&](const auto& levels) __attribute__((always_inline)) {
        decodeWith<Packer>(levels, spec, in, count, sink);
      });
}

// acc[i] += input i widened, i < count (kernels.h's widenAdd).
template <typename Conversion>
SPCCL_ALWAYS_INLINE void widenAdd(float* acc, const void* input, size_t count) {
  Conversion::addWidened(static_cast<const typename Conversion::Storage*>(input), count, acc);
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

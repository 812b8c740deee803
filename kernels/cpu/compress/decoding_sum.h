// kernels.h's reduceQuantizeDecode: the owner's chunk summed from its own
// input and the peers' decodings a segment at a time, straight into the
// quantizer. Before, the schedules summed into an f32 accumulator of the
// whole chunk (a pass per peer over C/n floats, 4-8 MiB at 16 M f32 and
// n = 8, out of every cache once eight ranks share one) and encoded it
// in a last pass; here the sum of a segment is formed in the codec's
// scratch, which stays in L1, and the accumulator is never written.
#pragma once

#include "kernels/cpu/compress/f32_runs.h"
#include "kernels/cpu/reduce_ops.h"

namespace spccl::kernels::codec_passes {

// quantize's input: (0 + the run) + each decoding in order, / divisor
// where it is not 0; with error feedback, plus the residual (as Source).
// A range is computed into the scratch it is given; a block that runs
// past its segment is summed again when blockScale reads its rest, the
// same bits both times.
template <typename Packer, typename Levels, bool kWithFeedback>
struct DecodingSumSource {
  static constexpr bool kFeedback = kWithFeedback;
  const QuantizerSpec& spec;
  const Levels& levels;
  F32Run base;
  const unsigned char* const* decodings;
  int decodingCount;
  int divisor;
  size_t count;  // the chunk's length: where the decodings' codes start
  float* residual;

  // begin is a multiple of 8 (segments and blockScale's chunks are), so
  // every decoding's codes for the range start on a byte.
  SPCCL_ALWAYS_INLINE Float32Conversion::Inputs inputs(size_t begin, size_t n,
                                                       float* scratch) const {
    const float* x = runElements(base, begin, n, scratch, count);
    for (size_t j = 0; j < n; ++j) scratch[j] = 0.0f + x[j];  // 0 + x: -0 becomes +0
    const size_t packedAt =
        quantizedBlockCount(spec, count) * sizeof(float) + begin / 8 * spec.bits;
    uint8_t codes[kSegment];
    for (int d = 0; d < decodingCount; ++d) {
      const unsigned char* in = decodings[d];
      Packer::unpack(in + packedAt, n, spec.bits, codes);
      for (size_t i = begin; i < begin + n;) {
        const size_t b = i / spec.blockSize;
        const size_t pieceEnd = std::min(begin + n, (b + 1) * spec.blockSize);
        float m;
        std::memcpy(&m, in + b * sizeof(float), sizeof(float));
        for (size_t j = i - begin; j < pieceEnd - begin; ++j) scratch[j] += m * levels(codes[j]);
        i = pieceEnd;
      }
    }
    if (divisor != 0)
      for (size_t j = 0; j < n; ++j) scratch[j] = divideTruncating(scratch[j], divisor);
    return {scratch};
  }
  template <typename Inputs>
  SPCCL_ALWAYS_INLINE float value(const Inputs& x, size_t begin, size_t j) const {
    return inputWithResidual<kFeedback>(x, residual, begin, j);
  }
};

template <typename Packer, LevelSource kPiecewise, LevelSource kLinear>
SPCCL_ALWAYS_INLINE void reduceQuantizeDecode(const QuantizerSpec& spec, const F32Run& base,
                                              const unsigned char* const* decodings,
                                              int decodingCount, int divisor, size_t count,
                                              unsigned char* out, float* residual,
                                              const F32Run& decoded) {
  withLevels<kPiecewise, kLinear>(
      spec, [&](const auto& levels) __attribute__((always_inline)) {
        using Levels = std::decay_t<decltype(levels)>;
        if (residual)
          quantizeSource<Packer>(
              spec,
              DecodingSumSource<Packer, Levels, true>{spec, levels, base, decodings, decodingCount,
                                                      divisor, count, residual},
              count, out, RunStoreSink{decoded});
        else
          quantizeSource<Packer>(
              spec,
              DecodingSumSource<Packer, Levels, false>{spec, levels, base, decodings, decodingCount,
                                                       divisor, count, nullptr},
              count, out, RunStoreSink{decoded});
      });
}

}  // namespace spccl::kernels::codec_passes

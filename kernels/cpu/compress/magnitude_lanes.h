// The magnitude quantizers of quantizer_levels.h rewritten for the fast
// codecs (codec_passes.h): the same float operations in the same order, so
// the same codes, but with no table lookup and no branch, only float and
// integer operations that the compiler turns into vector lanes. Powers of
// two come from building a float's exponent field.
//
// Levels are computed instead of looked up: with N magnitude bits every
// level is an integer P over D = N 2^(N-1) (piecewise, Eq. 12's U_0 = m/D)
// or over 2^N - 1 (linear), so one float division rounds it correctly,
// which is what signedLevels' double expression rounded to float gives
// (P/D is either exact in a float or, its odd denominator dividing D <= 448,
// more than 2^-25/448 away, relatively, from any float rounding boundary,
// far beyond the double's error). test_compress_fast_codecs.cc checks every
// level of every width against signedLevels, and (a disabled test, run by
// hand) the code and level of every float x in [0, 1] against
// quantizer_levels.h.
#pragma once

#include <bit>
#include <cstdint>

namespace spccl::kernels {

// What the fast codecs run per element is forced inline into the one entry
// point per instruction set (quantize_cpu.cc), and so compiled for it.
#define SPCCL_ALWAYS_INLINE inline __attribute__((always_inline))

// 2^e as a float, for -126 <= e <= 127.
SPCCL_ALWAYS_INLINE float powerOfTwo(int32_t e) {
  return std::bit_cast<float>(static_cast<uint32_t>(e + 127) << 23);
}

// A magnitude code and its level (a fraction of m).
struct Quantized {
  uint32_t code;
  float level;
};

// AccTFM Eq. (6)-(12), as PiecewiseMagnitude: with t = xN, cluster
// k = min(floor(t), N-1), intervals per cluster 2^(N-1-k), base code
// 2^N - 2^(N-k) = 2^N - 2 * 2^(N-1-k).
struct PiecewiseLanes {
  int32_t n;
  float clustersPerUnit;  // N
  float denominator;      // N 2^(N-1) = m/U_0, Eq. (12)

  explicit PiecewiseLanes(int magnitudeBits)
      : n(magnitudeBits),
        clustersPerUnit(static_cast<float>(magnitudeBits)),
        denominator(static_cast<float>(magnitudeBits * (1 << (magnitudeBits - 1)))) {}

  // x in [0, 1]: the code and, for the error-feedback residual, its level
  // (k 2^(N-1) + r 2^k) / D, with r the rounded interval within cluster k.
  SPCCL_ALWAYS_INLINE Quantized quantize(float x) const {
    const float t = x * clustersPerUnit;
    const int32_t truncated = static_cast<int32_t>(t);
    const int32_t k = truncated < n - 1 ? truncated : n - 1;
    const float intervals = powerOfTwo(n - 1 - k);
    const float within = (t - static_cast<float>(k)) * intervals;
    // Half away from zero (within >= 0), as quantizer_levels.h, bit for bit.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const int32_t rounded = static_cast<int32_t>(within + 0.5f);
    const float p =
        static_cast<float>(k) * powerOfTwo(n - 1) + static_cast<float>(rounded) * powerOfTwo(k);
    return {static_cast<uint32_t>(rounded + (1 << n) - 2 * static_cast<int32_t>(intervals)),
            p / denominator};
  }
  SPCCL_ALWAYS_INLINE uint32_t code(float x) const { return quantize(x).code; }
  // Level of magnitude code c as a fraction of m: (k 2^(N-1) + j 2^k) / D
  // with j = c - base[k]. The cluster comes from q = 2^N - c in [1, 2^N]:
  // 2^(N-k-1) < q <= 2^(N-k), i.e. N - k = ceil(log2 q) = floor(log2(2q-1)),
  // at least 1 (the top code, q = 1, ends cluster N-1).
  SPCCL_ALWAYS_INLINE float level(uint32_t c) const {
    const int32_t q = (1 << n) - static_cast<int32_t>(c);
    const int32_t log2 =
        static_cast<int32_t>(std::bit_cast<uint32_t>(static_cast<float>(2 * q - 1)) >> 23) - 127;
    const int32_t e = log2 > 1 ? log2 : 1;  // N - k
    const float j = powerOfTwo(e) - static_cast<float>(q);
    const float p = static_cast<float>(n - e) * powerOfTwo(n - 1) + j * powerOfTwo(n - e);
    return p / denominator;
  }
};

// AccTFM Eq. (4)-(5), as LinearMagnitude: 2^N - 1 steps.
struct LinearLanes {
  float steps;

  explicit LinearLanes(int magnitudeBits) : steps(static_cast<float>((1 << magnitudeBits) - 1)) {}

  SPCCL_ALWAYS_INLINE Quantized quantize(float x) const {
    // Half up (x >= 0), as quantizer_levels.h, bit for bit.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const int32_t rounded = static_cast<int32_t>(x * steps + 0.5f);
    return {static_cast<uint32_t>(rounded), static_cast<float>(rounded) / steps};
  }
  SPCCL_ALWAYS_INLINE uint32_t code(float x) const { return quantize(x).code; }
  SPCCL_ALWAYS_INLINE float level(uint32_t c) const {
    return static_cast<float>(static_cast<int32_t>(c)) / steps;
  }
};

}  // namespace spccl::kernels

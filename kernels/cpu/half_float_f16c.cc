// F16C conversions (half_float_f16c.h): 8 lanes at a time. Defined out of
// line with a target attribute, so that callers compiled for any
// instruction set may call them (an F16C intrinsic cannot be inlined into a
// function without F16C, which is what the codecs' default-target
// templates are: codec_passes.h).
#include "kernels/cpu/half_float_f16c.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cstring>

namespace spccl::kernels {
namespace {

#define SPCCL_TARGET_F16C __attribute__((target("avx,f16c")))

constexpr size_t kLanes = 8;

SPCCL_TARGET_F16C inline __m256 widenLanes(const uint16_t* in) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
}

// Round to nearest even whatever MXCSR's rounding mode, as floatToHalf.
SPCCL_TARGET_F16C inline void narrowLanes(const float* in, uint16_t* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
}

}  // namespace

// The last n % 8 elements go through the same instruction via a padded
// copy, so that every element of every count takes one path (and the tests'
// odd counts test it).
SPCCL_TARGET_F16C void halfToFloatF16c(const uint16_t* in, size_t n, float* out) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(out + i, widenLanes(in + i));
  if (i == n) return;
  uint16_t narrow[kLanes] = {};
  float wide[kLanes];
  std::memcpy(narrow, in + i, (n - i) * sizeof(uint16_t));
  _mm256_storeu_ps(wide, widenLanes(narrow));
  std::memcpy(out + i, wide, (n - i) * sizeof(float));
}

SPCCL_TARGET_F16C void floatToHalfF16c(const float* in, size_t n, uint16_t* out) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) narrowLanes(in + i, out + i);
  if (i == n) return;
  float wide[kLanes] = {};
  uint16_t narrow[kLanes];
  std::memcpy(wide, in + i, (n - i) * sizeof(float));
  narrowLanes(wide, narrow);
  std::memcpy(out + i, narrow, (n - i) * sizeof(uint16_t));
}

}  // namespace spccl::kernels
#endif

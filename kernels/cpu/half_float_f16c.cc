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

SPCCL_TARGET_F16C inline __m256 widened(const uint16_t* in) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
}

SPCCL_TARGET_F16C inline void widenLanes(const uint16_t* in, float* out) {
  _mm256_storeu_ps(out, widened(in));
}

// Round to nearest even whatever MXCSR's rounding mode, as floatToHalf.
SPCCL_TARGET_F16C inline void narrowLanes(const float* in, uint16_t* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
}

SPCCL_TARGET_F16C inline void addWidenedLanes(const uint16_t* in, float* acc) {
  _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_loadu_ps(acc), widened(in)));
}

// kOp on each group of 8 elements; the last n % 8 through padded copies,
// so that every element of every count takes the same instructions (and
// the tests' odd counts test them). kReadsOut: kOp reads its outputs.
template <typename In, typename Out, void (*kOp)(const In*, Out*), bool kReadsOut>
SPCCL_TARGET_F16C inline void inGroupsOf8(const In* in, size_t n, Out* out) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) kOp(in + i, out + i);
  if (i == n) return;
  In paddedIn[kLanes] = {};
  Out paddedOut[kLanes] = {};
  std::memcpy(paddedIn, in + i, (n - i) * sizeof(In));
  if constexpr (kReadsOut) std::memcpy(paddedOut, out + i, (n - i) * sizeof(Out));
  kOp(paddedIn, paddedOut);
  std::memcpy(out + i, paddedOut, (n - i) * sizeof(Out));
}

}  // namespace

SPCCL_TARGET_F16C void halfToFloatF16c(const uint16_t* in, size_t n, float* out) {
  inGroupsOf8<uint16_t, float, widenLanes, false>(in, n, out);
}

SPCCL_TARGET_F16C void floatToHalfF16c(const float* in, size_t n, uint16_t* out) {
  inGroupsOf8<float, uint16_t, narrowLanes, false>(in, n, out);
}

SPCCL_TARGET_F16C void addHalfToFloatF16c(const uint16_t* in, size_t n, float* acc) {
  inGroupsOf8<uint16_t, float, addWidenedLanes, true>(in, n, acc);
}

}  // namespace spccl::kernels
#endif

// IEEE 754 binary16 ("half") and bfloat16 <-> binary32 conversions.
//
// Bit manipulation only, so they need no F16C/AVX512-FP16 and give the same
// bits on every host; branch-free (selects only) so the compiler can
// vectorise the loops that call them. float -> narrow rounds to nearest,
// ties to even; overflow gives inf; NaN stays NaN, quietened, keeping the
// top payload bits and the sign; subnormals are exact in both directions.
#pragma once

#include <bit>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels {

// Bit blends rather than ?: wherever one side comes from float arithmetic:
// under -ftrapping-math (the default) the compiler sinks a float operation
// used by only one side of a ?: into a branch, and a loop with a branch is
// not vectorised.
namespace half_float_detail {
SPCCL_HOST_DEVICE inline uint32_t maskOf(bool condition) {
  return 0u - static_cast<uint32_t>(condition);
}
SPCCL_HOST_DEVICE inline uint32_t blend(uint32_t mask, uint32_t ifSet, uint32_t ifClear) {
  return (ifSet & mask) | (ifClear & ~mask);
}
}  // namespace half_float_detail

// binary16 -> binary32 (exact). The exponent is rebiased; subnormals are
// renormalised by one exact float subtraction (F. Giesen, "half_to_float",
// 2012): mantissa m at exponent 2^-14 reads as 2^-14 * (1 + m/1024) once the
// implicit bit is added, and subtracting 2^-14 leaves m * 2^-24.
SPCCL_HOST_DEVICE inline float halfToFloat(uint16_t h) {
  constexpr uint32_t kShiftedExponent = 0x7c00u << 13;
  constexpr float kSubnormalBias = std::bit_cast<float>(uint32_t{113} << 23);  // 2^-14
  const uint32_t magnitude = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & kShiftedExponent;
  const uint32_t rebiased = magnitude + ((127u - 15u) << 23);
  const uint32_t infOrNaN = rebiased + ((128u - 16u) << 23);
  const float subnormal = std::bit_cast<float>(rebiased + (1u << 23)) - kSubnormalBias;
  using namespace half_float_detail;
  uint32_t bits = exponent == kShiftedExponent ? infOrNaN : rebiased;
  bits = blend(maskOf(exponent == 0), std::bit_cast<uint32_t>(subnormal), bits);
  // A signalling NaN becomes quiet, as every IEEE conversion does.
  bits |= exponent == kShiftedExponent && (h & 0x03ffu) != 0 ? 0x00400000u : 0u;
  return std::bit_cast<float>(bits | static_cast<uint32_t>(h & 0x8000u) << 16);
}

// binary32 -> binary16, round to nearest even (F. Giesen,
// "float_to_half_fast3_rtne", 2012). Normal results round by adding
// 0xfff plus the lowest kept bit before truncating; results below 2^-14 are
// rounded by the FPU itself: adding 2^-1 aligns the value so that the
// float's own rounding lands on the half subnormal grid (2^-24).
SPCCL_HOST_DEVICE inline uint16_t floatToHalf(float f) {
  constexpr uint32_t kFloatInf = 0xffu << 23;
  constexpr uint32_t kHalfOverflow = (127u + 16u) << 23;  // 2^16: beyond max half, after rounding
  constexpr uint32_t kHalfNormalMin = 113u << 23;         // 2^-14
  constexpr uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;  // 2^-1
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;

  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x03ffu);
  const uint32_t special = magnitude > kFloatInf ? nan : 0x7c00u;
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) +
                                                     std::bit_cast<float>(kDenormMagic)) -
                             kDenormMagic;
  const uint32_t mantissaOdd = (magnitude >> 13) & 1u;
  const uint32_t normal =
      (magnitude + (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mantissaOdd) >> 13;

  using namespace half_float_detail;
  const uint32_t finite = blend(maskOf(magnitude < kHalfNormalMin), subnormal, normal);
  const uint32_t half = blend(maskOf(magnitude >= kHalfOverflow), special, finite);
  return static_cast<uint16_t>(half | sign);
}

// bfloat16 is the top half of a binary32, so widening is a shift (which,
// unlike halfToFloat, leaves a signalling NaN signalling; arithmetic on it
// quietens it anyway).
SPCCL_HOST_DEVICE inline float bfloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// binary32 -> bfloat16, round to nearest even: add just under half an ulp
// plus the lowest kept bit, then truncate; the carry into the exponent gives
// the next binade or inf, as IEEE rounding does. NaN is quietened instead,
// since the carry could turn a NaN with low payload bits into inf.
SPCCL_HOST_DEVICE inline uint16_t floatToBfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quietNaN = (bits >> 16) | 0x0040u;
  const bool isNaN = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(isNaN ? quietNaN : rounded);
}

}  // namespace spccl::kernels

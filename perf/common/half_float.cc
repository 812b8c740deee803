#include "common/half_float.h"

#include <cmath>
#include <cstring>

namespace spccl::perf {

namespace {

constexpr uint16_t kHalfSignBit = 0x8000;
constexpr uint16_t kHalfInfinity = 0x7c00;
constexpr uint16_t kHalfQuietNan = 0x7e00;
constexpr int kHalfMantissaBits = 10;
constexpr int kHalfExponentBias = 15;
constexpr double kHalfOverflow = 65520.0;  // rounds to infinity (max finite: 65504)

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

}  // namespace

float halfToFloat(uint16_t bits) {
  const bool negative = (bits & kHalfSignBit) != 0;
  const int exponent = (bits >> kHalfMantissaBits) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);  // zero or subnormal
  } else if (exponent == 0x1f) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - kHalfExponentBias - kHalfMantissaBits);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

uint16_t floatToHalf(float value) {
  const uint16_t sign = std::signbit(value) ? kHalfSignBit : 0;
  if (std::isnan(value)) return sign | kHalfQuietNan;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude >= kHalfOverflow) return sign | kHalfInfinity;
  if (magnitude < std::ldexp(1.0, 1 - kHalfExponentBias)) {
    // Subnormal: the bits are the value in units of 2^-24; rounding up to
    // 1024 lands exactly on the smallest normal's encoding.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
  }
  int exponent;
  std::frexp(magnitude, &exponent);
  exponent -= 1;  // magnitude = 1.m * 2^exponent
  double mantissa = std::nearbyint((std::ldexp(magnitude, -exponent) - 1.0) * 1024.0);
  if (mantissa >= 1024.0) {
    mantissa = 0.0;
    exponent += 1;
  }
  const int biased = exponent + kHalfExponentBias;
  if (biased >= 0x1f) return sign | kHalfInfinity;
  return sign | static_cast<uint16_t>((biased << kHalfMantissaBits) | static_cast<int>(mantissa));
}

float bfloat16ToFloat(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

uint16_t floatToBfloat16(float value) {
  const uint32_t bits = floatBits(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // stay quiet
  const uint32_t roundingBias = 0x7fff + ((bits >> 16) & 1);                   // ties to even
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

}  // namespace spccl::perf

// binary16 / bfloat16 conversions, checked exhaustively over all 65536 bit
// patterns against an independent decoder (ldexp of the fields) and, for
// rounding, against an oracle that searches the sorted table of every
// finite value of the format for the nearest one (ties to even).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/half_float.h"

namespace spccl::kernels {
namespace {

// A narrow binary format by its field widths: binary16 is (5, 10),
// bfloat16 is (8, 7).
struct NarrowFormat {
  int exponentBits;
  int mantissaBits;
  float (*decode)(uint16_t);
  uint16_t (*encode)(float);

  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint16_t infinity() const {
    return static_cast<uint16_t>(((1u << exponentBits) - 1) << mantissaBits);
  }
  bool isNaN(uint16_t bits) const { return (bits & 0x7fffu) > infinity(); }
  // IEEE 754 §3.4 from the fields, with no bit tricks.
  double value(uint16_t bits) const {
    const int exponent = (bits & 0x7fff) >> mantissaBits;
    const int mantissa = bits & ((1 << mantissaBits) - 1);
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (exponent == (1 << exponentBits) - 1) {
      return mantissa == 0 ? sign * INFINITY : NAN;
    }
    if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias() - mantissaBits);
    return sign * std::ldexp(mantissa + (1 << mantissaBits), exponent - bias() - mantissaBits);
  }
};

const NarrowFormat kHalf{5, 10, halfToFloat, floatToHalf};
const NarrowFormat kBfloat16{8, 7, bfloat16ToFloat, floatToBfloat16};

// Correct rounding of a non-NaN double to the format, by search.
class RoundingOracle {
 public:
  explicit RoundingOracle(const NarrowFormat& format) : format_(format) {
    for (uint32_t bits = 0; bits < format.infinity(); ++bits) {
      magnitudes_.push_back(format.value(static_cast<uint16_t>(bits)));
    }
    const double largest = magnitudes_.back();
    overflowThreshold_ = largest + (largest - magnitudes_[magnitudes_.size() - 2]) / 2;
  }

  uint16_t round(double x) const {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double magnitude = std::fabs(x);
    // At the threshold the tie goes to the even neighbour, which is inf
    // (the largest finite value has an odd mantissa).
    if (magnitude >= overflowThreshold_) return sign | format_.infinity();
    // Between the largest value and the threshold: the largest value.
    if (magnitude >= magnitudes_.back())
      return static_cast<uint16_t>(sign | (magnitudes_.size() - 1));
    auto above = std::lower_bound(magnitudes_.begin(), magnitudes_.end(), magnitude);
    size_t index = static_cast<size_t>(above - magnitudes_.begin());
    if (*above != magnitude) {
      // The bit pattern's lowest bit is the mantissa's, so even index = even mantissa.
      const double up = *above - magnitude;
      const double down = magnitude - *(above - 1);
      if (down < up || (down == up && (index - 1) % 2 == 0)) --index;
    }
    return static_cast<uint16_t>(sign | index);
  }

 private:
  const NarrowFormat& format_;
  std::vector<double> magnitudes_;
  double overflowThreshold_;
};

void expectDecodesAllPatterns(const NarrowFormat& format) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t bits = static_cast<uint16_t>(i);
    const float widened = format.decode(bits);
    if (format.isNaN(bits)) {
      ASSERT_TRUE(std::isnan(widened)) << std::hex << bits;
      // Same sign, same payload (the quiet bit may be set on the way).
      const uint32_t wideBits = std::bit_cast<uint32_t>(widened);
      EXPECT_EQ(wideBits >> 31, bits >> 15u) << std::hex << bits;
      EXPECT_EQ((wideBits >> (23 - format.mantissaBits)) & ((1u << (format.mantissaBits - 1)) - 1),
                bits & ((1u << (format.mantissaBits - 1)) - 1))
          << std::hex << bits;
    } else {
      ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(widened)),
                std::bit_cast<uint64_t>(format.value(bits)))
          << std::hex << bits;
    }
  }
}

void expectRoundTripsAllPatterns(const NarrowFormat& format) {
  const uint16_t quietBit = static_cast<uint16_t>(1u << (format.mantissaBits - 1));
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t bits = static_cast<uint16_t>(i);
    const uint16_t back = format.encode(format.decode(bits));
    if (format.isNaN(bits)) {
      // NaN stays NaN; a signalling one comes back quietened.
      ASSERT_TRUE(format.isNaN(back)) << std::hex << bits << " -> " << back;
      ASSERT_EQ(back, bits | quietBit) << std::hex << bits;
    } else {
      ASSERT_EQ(back, bits) << std::hex << bits;
    }
  }
}

// Every value where rounding can go wrong: each representable value, the
// midpoint between each pair of neighbours (exact in float: the formats
// have at most 11 significant bits) and the floats just either side of it.
void expectRoundsLikeOracle(const NarrowFormat& format) {
  const RoundingOracle oracle(format);
  // Stops at the first mismatch rather than reporting millions.
  auto rounds = [&](float x) {
    if (format.encode(x) == oracle.round(x)) return true;
    ADD_FAILURE() << std::hexfloat << x << ": got 0x" << std::hex << format.encode(x) << ", want 0x"
                  << oracle.round(x);
    return false;
  };
  for (uint32_t bits = 0; bits < format.infinity(); ++bits) {
    for (const uint16_t sign : {0x0000, 0x8000}) {
      const float low = static_cast<float>(format.value(static_cast<uint16_t>(bits | sign)));
      const float high = static_cast<float>(format.value(static_cast<uint16_t>((bits + 1) | sign)));
      const float midpoint =
          static_cast<float>((format.value(static_cast<uint16_t>(bits | sign)) +
                              format.value(static_cast<uint16_t>((bits + 1) | sign))) /
                             2);
      ASSERT_FALSE(std::isinf(midpoint) && !std::isinf(high));
      if (!rounds(low) || !rounds(midpoint) || !rounds(std::nextafter(midpoint, 0.0f)) ||
          !rounds(std::nextafter(midpoint, midpoint * 2))) {
        return;
      }
    }
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 2'000'000; ++i) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(x) && !rounds(x)) return;
  }
}

void expectFloatNaNsStayNaN(const NarrowFormat& format) {
  for (const uint32_t nanBits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, 0x7fffffffu,
                                 0xff800001u, 0x7f802000u}) {
    const uint16_t narrow = format.encode(std::bit_cast<float>(nanBits));
    EXPECT_TRUE(format.isNaN(narrow)) << std::hex << nanBits;
    EXPECT_EQ(narrow >> 15, nanBits >> 31) << std::hex << nanBits;
  }
}

TEST(HalfFloat, HalfDecodesEveryPatternExactly) { expectDecodesAllPatterns(kHalf); }
TEST(HalfFloat, Bfloat16DecodesEveryPatternExactly) { expectDecodesAllPatterns(kBfloat16); }
TEST(HalfFloat, HalfRoundTripsEveryPattern) { expectRoundTripsAllPatterns(kHalf); }
TEST(HalfFloat, Bfloat16RoundTripsEveryPattern) { expectRoundTripsAllPatterns(kBfloat16); }
TEST(HalfFloat, HalfRoundsToNearestEven) { expectRoundsLikeOracle(kHalf); }
TEST(HalfFloat, Bfloat16RoundsToNearestEven) { expectRoundsLikeOracle(kBfloat16); }
TEST(HalfFloat, HalfKeepsNaN) { expectFloatNaNsStayNaN(kHalf); }
TEST(HalfFloat, Bfloat16KeepsNaN) { expectFloatNaNsStayNaN(kBfloat16); }

TEST(HalfFloat, HalfEdgeCases) {
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the tie goes to even: inf
  EXPECT_EQ(floatToHalf(-1e30f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: +0
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie, to even
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(std::bit_cast<float>(0x7fc00000u)), 0x7e00);
}

TEST(HalfFloat, Bfloat16EdgeCases) {
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x7f7f8000u)), 0x7f80);  // tie: odd -> up
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie: even stays
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x00008000u)), 0x0000);  // subnormal tie
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x00008001u)), 0x0001);
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x7f800001u)),
            0x7fc0);  // low payload: NaN, not inf
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x7fc00000u)), 0x7fc0);
  EXPECT_EQ(floatToBfloat16(-0.0f), 0x8000);
}

}  // namespace
}  // namespace spccl::kernels

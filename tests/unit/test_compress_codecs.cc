// The CPU codecs (kernels.h, kernels/cpu/compress) against the paper's
// definitions: a hand-worked piecewise block (AccTFM Eq. 6-12 for N = 3),
// the nearest-level property and error bound for every codec, bit width,
// type and block size (1, not dividing the count, larger than the count),
// all-zero blocks, inf/NaN blocks, subnormals, bit packing and error
// feedback.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/half_float.h"
#include "kernels/kernels.h"

namespace spccl::kernels {
namespace {

const KernelTable& table() { return cpuKernels(); }

std::vector<unsigned char> encode(const QuantizerSpec& spec, spcclDataType_t type, const void* in,
                                  size_t count, float* residual = nullptr) {
  std::vector<unsigned char> out(quantizedBytes(spec, count));
  table().quantize[type](spec, in, count, out.data(), residual);
  return out;
}

std::vector<float> decodeF32(const QuantizerSpec& spec, const std::vector<unsigned char>& enc,
                             size_t count) {
  std::vector<float> out(count);
  table().dequantize[spcclFloat32](spec, enc.data(), count, out.data());
  return out;
}

// The 2^N levels of a codec, normalised by m, straight from the equations.
std::vector<double> levels(Codec codec, int bits) {
  const int n = bits - 1;
  std::vector<double> out;
  if (codec == Codec::Linear) {  // Eq. (4): step = m / (2^(bits-1) - 1)
    for (int c = 0; c < (1 << n); ++c) out.push_back(c / double((1 << n) - 1));
    return out;
  }
  const double u0 = 1.0 / (n * double(1 << (n - 1)));  // Eq. (12)
  out.push_back(0.0);
  for (int k = 0; k < n; ++k) {  // Eq. (7), (8)
    const double ck = double(k) / n, uk = u0 * (1 << k);
    for (int j = 1; j <= (1 << (n - 1 - k)); ++j) out.push_back(ck + j * uk);
  }
  return out;
}

TEST(CompressCodecs, PiecewiseLevelsCountTwoToTheN) {
  for (int bits = 2; bits <= 8; ++bits) {
    std::vector<double> l = levels(Codec::Piecewise, bits);
    ASSERT_EQ(l.size(), size_t{1} << (bits - 1)) << bits;  // Eq. (11): 2^N - 1 intervals
    EXPECT_NEAR(l.back(), 1.0, 1e-12) << bits;
  }
}

// N = 3 (4 bits), m = 1: levels 0, 1/12, 1/6, 1/4, 1/3 | 1/2, 2/3 | 1.
TEST(CompressCodecs, PiecewiseHandWorkedBlock) {
  const QuantizerSpec spec{Codec::Piecewise, 4, 8};
  const float in[5] = {1.0f, 0.3f, -0.55f, 0.9f, 0.04f};
  // 0.3: cluster 0 (t = 0.9), round(0.9 * 4) = 4 -> 4/12; -0.55: cluster 1,
  // round(0.65 * 2) = 1 -> 1/3 + 1/6; 0.9: cluster 2, round(0.7) = 1 -> 1;
  // 0.04: round(0.48) = 0.
  const std::vector<unsigned char> enc = encode(spec, spcclFloat32, in, 5);
  ASSERT_EQ(enc.size(), 4u + 3u);
  float scale;
  std::memcpy(&scale, enc.data(), 4);
  EXPECT_EQ(scale, 1.0f);
  // codes 7, 4, 8|5, 7, 0 packed LSB-first, 4 bits each.
  EXPECT_EQ(enc[4], 0x47);
  EXPECT_EQ(enc[5], 0x7d);
  EXPECT_EQ(enc[6], 0x00);
  const std::vector<float> out = decodeF32(spec, enc, 5);
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[1], 1.0f / 3);
  EXPECT_FLOAT_EQ(out[2], -0.5f);
  EXPECT_FLOAT_EQ(out[3], 1.0f);
  EXPECT_FLOAT_EQ(out[4], 0.0f);
}

TEST(CompressCodecs, LinearHandWorkedBlock) {
  const QuantizerSpec spec{Codec::Linear, 3, 4};  // step = m/3
  const float in[4] = {-3.0f, 1.4f, 1.6f, 0.4f};
  const std::vector<float> out = decodeF32(spec, encode(spec, spcclFloat32, in, 4), 4);
  EXPECT_FLOAT_EQ(out[0], -3.0f);
  EXPECT_FLOAT_EQ(out[1], 1.0f);
  EXPECT_FLOAT_EQ(out[2], 2.0f);
  EXPECT_FLOAT_EQ(out[3], 0.0f);
}

struct TypeCase {
  spcclDataType_t type;
  double outputRounding;   // relative rounding of the decoded value on store
  double outputSubnormal;  // absolute rounding on store below the normal range
};

uint16_t narrow(spcclDataType_t type, float v) {
  return type == spcclFloat16 ? floatToHalf(v) : floatToBfloat16(v);
}
float widen(spcclDataType_t type, uint16_t v) {
  return type == spcclFloat16 ? halfToFloat(v) : bfloat16ToFloat(v);
}

// Input of `type` holding `values` (rounded to the type); returns what the
// codec actually sees, as floats.
std::vector<float> storeAs(spcclDataType_t type, const std::vector<float>& values,
                           std::vector<unsigned char>* storage) {
  std::vector<float> seen(values.size());
  storage->resize(values.size() * spcclTypeSize(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == spcclFloat32) {
      std::memcpy(storage->data() + 4 * i, &values[i], 4);
      seen[i] = values[i];
    } else {
      const uint16_t h = narrow(type, values[i]);
      std::memcpy(storage->data() + 2 * i, &h, 2);
      seen[i] = widen(type, h);
    }
  }
  return seen;
}

std::vector<float> decodeAs(spcclDataType_t type, const QuantizerSpec& spec,
                            const std::vector<unsigned char>& enc, size_t count) {
  std::vector<unsigned char> raw(count * spcclTypeSize(type));
  table().dequantize[type](spec, enc.data(), count, raw.data());
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (type == spcclFloat32) {
      std::memcpy(&out[i], raw.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      out[i] = widen(type, h);
    }
  }
  return out;
}

// Every element decodes to its nearest level (ties and float rounding of
// x = |v|/m allowed 1e-5 m), hence within m * halfStepFraction.
void checkRoundTrip(Codec codec, int bits, size_t blockSize, const TypeCase& tc,
                    const std::vector<float>& values) {
  const QuantizerSpec spec{codec, bits, blockSize};
  std::vector<unsigned char> storage;
  const std::vector<float> seen = storeAs(tc.type, values, &storage);
  const size_t count = values.size();
  const std::vector<unsigned char> enc = encode(spec, tc.type, storage.data(), count);
  ASSERT_EQ(enc.size(), quantizedBytes(spec, count));
  const std::vector<float> out = decodeAs(tc.type, spec, enc, count);
  const std::vector<double> lv = levels(codec, bits);
  for (size_t b = 0; b * blockSize < count; ++b) {
    const size_t end = std::min(count, (b + 1) * blockSize);
    double m = 0;
    for (size_t i = b * blockSize; i < end; ++i) m = std::max(m, std::fabs(double(seen[i])));
    for (size_t i = b * blockSize; i < end; ++i) {
      const double v = seen[i], d = out[i];
      double nearest = 1e300;
      for (double l : lv) nearest = std::min(nearest, std::fabs(std::fabs(v) - l * m));
      const double slack =
          1e-5 * m + tc.outputRounding * std::fabs(d) + tc.outputSubnormal + 2 * FLT_TRUE_MIN;
      ASSERT_LE(std::fabs(d - v), nearest + slack)
          << "codec " << int(codec) << " bits " << bits << " block " << blockSize << " type "
          << tc.type << " i " << i << " v " << v << " decoded " << d << " m " << m;
      ASSERT_LE(std::fabs(d - v), m * halfStepFraction(codec, bits) + slack);
      if (v != 0) {
        ASSERT_TRUE(d == 0 || std::signbit(d) == std::signbit(v)) << i;
      }
    }
  }
}

std::vector<float> gaussian(size_t count, uint64_t seed, double sigma = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, sigma);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

const TypeCase kTypes[] = {{spcclFloat32, 0.0, 0.0},
                           {spcclFloat16, 1.0 / 2048, 0x1p-25},
                           {spcclBfloat16, 1.0 / 256, 0x1p-134}};

TEST(CompressCodecs, RoundTripEveryWidthTypeAndBlockSize) {
  const std::vector<float> values = gaussian(1001, 7);
  for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
    for (int bits = kMinQuantizerBits; bits <= kMaxQuantizerBits; ++bits) {
      for (size_t block : {size_t{1}, size_t{3}, size_t{64}, size_t{256}, size_t{5000}}) {
        for (const TypeCase& tc : kTypes) checkRoundTrip(codec, bits, block, tc, values);
      }
    }
  }
}

// Segments of 4096 elements inside the kernel: blocks that straddle them.
TEST(CompressCodecs, RoundTripAcrossSegments) {
  const std::vector<float> values = gaussian(3 * 4096 + 5, 11, 1e3);
  for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
    for (int bits : {2, 5, 8}) checkRoundTrip(codec, bits, 1000, kTypes[0], values);
  }
}

TEST(CompressCodecs, AllZeroBlocksDecodeToZero) {
  std::vector<float> values = gaussian(40, 3);
  for (size_t i = 8; i < 24; ++i) values[i] = (i % 2) ? 0.0f : -0.0f;
  for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
    const QuantizerSpec spec{codec, 4, 8};
    std::vector<float> residual(40, 0.0f);
    const std::vector<float> out =
        decodeF32(spec, encode(spec, spcclFloat32, values.data(), 40, residual.data()), 40);
    for (size_t i = 8; i < 24; ++i) {
      EXPECT_EQ(out[i], 0.0f) << i;
      EXPECT_EQ(residual[i], 0.0f) << i;
    }
    checkRoundTrip(codec, 4, 8, kTypes[0], values);
  }
}

// Documented in kernels.h: a block with inf or NaN decodes to NaN in every
// element; other blocks are untouched.
TEST(CompressCodecs, NonFiniteBlockDecodesToNaN) {
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> values = gaussian(24, 5);
    values[10] = bad;
    for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
      const QuantizerSpec spec{codec, 6, 8};
      std::vector<float> residual(24, 0.5f);
      const std::vector<float> out =
          decodeF32(spec, encode(spec, spcclFloat32, values.data(), 24, residual.data()), 24);
      for (size_t i = 8; i < 16; ++i) {
        EXPECT_TRUE(std::isnan(out[i])) << i;
        EXPECT_EQ(residual[i], 0.0f) << i;
      }
      for (size_t i : {size_t{0}, size_t{7}, size_t{16}, size_t{23}})
        EXPECT_TRUE(std::isfinite(out[i]));
    }
  }
}

TEST(CompressCodecs, SubnormalBlocks) {
  std::vector<float> values = gaussian(64, 9, 1.0);
  for (float& v : values) v *= 1e-39f;  // subnormal scale: 1/m overflows
  values[3] = FLT_TRUE_MIN;
  values[5] = -FLT_TRUE_MIN;
  for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
    for (int bits : {2, 4, 8}) {
      checkRoundTrip(codec, bits, 16, kTypes[0], values);
      std::vector<float> tiny = {FLT_TRUE_MIN, 0.0f, -FLT_TRUE_MIN, FLT_TRUE_MIN};
      checkRoundTrip(codec, bits, 4, kTypes[0], tiny);
    }
  }
  // f16 subnormals (below 2^-14).
  std::vector<float> half = gaussian(64, 13, 1e-5);
  for (Codec codec : {Codec::Piecewise, Codec::Linear})
    checkRoundTrip(codec, 5, 16, kTypes[1], half);
}

TEST(CompressCodecs, BitPackingRoundTripsEveryWidth) {
  std::mt19937_64 rng(1);
  for (int bits = 2; bits <= 8; ++bits) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{100}}) {
      std::vector<uint8_t> codes(count), back(count);
      for (uint8_t& c : codes) c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
      std::vector<unsigned char> packed(packedCodeBytes(bits, count) + 1, 0xee);
      packCodes(codes.data(), count, bits, packed.data());
      EXPECT_EQ(packed.back(), 0xee) << "wrote past packedCodeBytes";
      unpackCodes(packed.data(), count, bits, back.data());
      EXPECT_EQ(codes, back) << bits << " " << count;
    }
  }
}

// With error feedback the decodings of T calls on the same input sum to
// T * v minus the last residual: |sum - T v| <= one call's error bound.
TEST(CompressCodecs, ErrorFeedbackCarriesTheError) {
  const size_t count = 300;
  const std::vector<float> values = gaussian(count, 17);
  for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
    const QuantizerSpec spec{codec, 3, 32};
    std::vector<float> residual(count, 0.0f);
    std::vector<double> sum(count, 0.0);
    const int calls = 50;
    for (int t = 0; t < calls; ++t) {
      const std::vector<unsigned char> enc =
          encode(spec, spcclFloat32, values.data(), count, residual.data());
      const std::vector<float> out = decodeF32(spec, enc, count);
      for (size_t i = 0; i < count; ++i) {
        sum[i] += out[i];
        ASSERT_TRUE(std::isfinite(residual[i])) << i;
      }
    }
    double worst = 0;
    for (size_t i = 0; i < count; ++i)
      worst = std::max(worst, std::fabs(sum[i] - calls * values[i]));
    // Without feedback the error would grow with the number of calls.
    EXPECT_LT(worst, 5.0) << int(codec);
    for (size_t i = 0; i < count; ++i)
      EXPECT_NEAR(sum[i] - calls * double(values[i]), -residual[i], 1e-3) << i;
  }
}

TEST(CompressCodecs, WidenAddAndDequantizeAdd) {
  const std::vector<float> values = gaussian(100, 21);
  const QuantizerSpec spec{Codec::Piecewise, 8, 16};
  const std::vector<unsigned char> enc = encode(spec, spcclFloat32, values.data(), 100);
  const std::vector<float> decoded = decodeF32(spec, enc, 100);
  std::vector<float> acc(100, 1.0f);
  table().dequantizeAdd(spec, enc.data(), 100, acc.data());
  table().widenAdd[spcclFloat32](acc.data(), values.data(), 100);
  for (size_t i = 0; i < 100; ++i) EXPECT_FLOAT_EQ(acc[i], 1.0f + decoded[i] + values[i]);
  EXPECT_EQ(table().quantize[spcclInt32], nullptr);
  EXPECT_EQ(table().quantize[spcclFloat64], nullptr);
}

}  // namespace
}  // namespace spccl::kernels

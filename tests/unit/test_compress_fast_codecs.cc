// The fast codecs (quantize_cpu.cc, every variant the CPU runs, F16C's
// included) against the reference scalar ones (quantize_reference.cc):
// byte-identical encodings, residuals and decodings (f32, f16, bf16, and
// dequantizeAdd) for both codecs, every width 2..8, block sizes 1, small,
// not dividing the count, straddling the 4096-element segments and larger
// than the count, counts 0, 1, odd, with and without error feedback, on
// Gaussian data, values on and around every rounding boundary (ties),
// inf/NaN, zeros of both signs, subnormals, random f16/bf16 bit patterns
// (their subnormals, signalling NaNs, payloads), and on arbitrary encodings
// for the decoder, under scales whose decodings are f16/bf16 ties,
// overflows, subnormals and NaNs with payloads. Also: widenAdd against
// element_format.h, the variant cpuKernels() holds, the lane-wise
// magnitudes against quantizer_levels.h, and the bit packer against the
// bit-by-bit definition of kernels.h.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/compress/magnitude_lanes.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cpu/half_float.h"
#include "kernels/kernels.h"

namespace spccl::kernels {
namespace {

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }

// Bit patterns, so that NaNs compare too.
std::vector<uint32_t> bitsOf(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = bitsOf(v[i]);
  return out;
}

// Every code of every width: the computed level is signedLevels' entry.
TEST(CompressFastCodecs, LaneLevelsEqualTheTables) {
  for (int bits = kMinQuantizerBits; bits <= kMaxQuantizerBits; ++bits) {
    const int n = bits - 1;
    const std::array<float, 256> piecewise = signedLevels(PiecewiseMagnitude(n), bits);
    const std::array<float, 256> linear = signedLevels(LinearMagnitude(n), bits);
    for (uint32_t c = 0; c < (1u << n); ++c) {
      EXPECT_EQ(bitsOf(PiecewiseLanes(n).level(c)), bitsOf(piecewise[c])) << bits << " " << c;
      EXPECT_EQ(bitsOf(LinearLanes(n).level(c)), bitsOf(linear[c])) << bits << " " << c;
    }
  }
}

// The midpoints between consecutive levels of a codec (where codes change),
// as fractions of m.
std::vector<double> decisionPoints(Codec codec, int bits) {
  const int n = bits - 1;
  std::vector<double> points;
  for (uint32_t c = 0; c + 1 < (1u << n); ++c) {
    const double lo =
        codec == Codec::Linear ? LinearMagnitude(n).level(c) : PiecewiseMagnitude(n).level(c);
    const double hi = codec == Codec::Linear ? LinearMagnitude(n).level(c + 1)
                                             : PiecewiseMagnitude(n).level(c + 1);
    points.push_back((lo + hi) / 2);
  }
  for (int k = 0; k <= n; ++k) points.push_back(double(k) / n);  // cluster edges
  return points;
}

// x in [0, 1] around every decision point (ties included) and at random:
// the lane-wise codes equal quantizer_levels.h's, and so do their levels.
TEST(CompressFastCodecs, LaneCodesEqualTheScalarCodes) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int bits = kMinQuantizerBits; bits <= kMaxQuantizerBits; ++bits) {
    const int n = bits - 1;
    const std::array<float, 256> piecewise = signedLevels(PiecewiseMagnitude(n), bits);
    const std::array<float, 256> linear = signedLevels(LinearMagnitude(n), bits);
    for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
      std::vector<float> xs = {0.0f, FLT_TRUE_MIN, FLT_MIN, 1.0f, std::nextafter(1.0f, 0.0f)};
      for (double p : decisionPoints(codec, bits)) {
        float x = static_cast<float>(p);
        for (int i = 0; i < 8; ++i) x = std::nextafter(x, 0.0f);
        for (int i = 0; i < 17 && x <= 1.0f; ++i, x = std::nextafter(x, 2.0f)) xs.push_back(x);
      }
      for (int i = 0; i < 20000; ++i) xs.push_back(uniform(rng));
      for (float x : xs) {
        const uint32_t want =
            codec == Codec::Linear ? LinearMagnitude(n).code(x) : PiecewiseMagnitude(n).code(x);
        const Quantized got =
            codec == Codec::Linear ? LinearLanes(n).quantize(x) : PiecewiseLanes(n).quantize(x);
        ASSERT_EQ(got.code, want) << "bits " << bits << " codec " << int(codec) << " x " << x;
        // The level the residual uses is the table's.
        ASSERT_EQ(bitsOf(got.level),
                  bitsOf(codec == Codec::Linear ? linear[want] : piecewise[want]))
            << "bits " << bits << " codec " << int(codec) << " x " << x;
      }
    }
  }
}

// Every float in [0, 1], every width, both codecs: codes and levels (about
// a minute; run with --gtest_also_run_disabled_tests).
TEST(CompressFastCodecs, DISABLED_LaneCodesEqualTheScalarCodesForEveryFloat) {
  for (int bits = kMinQuantizerBits; bits <= kMaxQuantizerBits; ++bits) {
    const int n = bits - 1;
    const PiecewiseMagnitude piecewise(n);
    const LinearMagnitude linear(n);
    const PiecewiseLanes piecewiseLanes(n);
    const LinearLanes linearLanes(n);
    const std::array<float, 256> piecewiseTable = signedLevels(piecewise, bits);
    const std::array<float, 256> linearTable = signedLevels(linear, bits);
    size_t wrong = 0;
    for (uint32_t pattern = 0; pattern <= bitsOf(1.0f); ++pattern) {
      const float x = std::bit_cast<float>(pattern);
      const Quantized p = piecewiseLanes.quantize(x), l = linearLanes.quantize(x);
      const uint32_t pc = piecewise.code(x), lc = linear.code(x);
      wrong += p.code != pc || bitsOf(p.level) != bitsOf(piecewiseTable[pc]);
      wrong += l.code != lc || bitsOf(l.level) != bitsOf(linearTable[lc]);
    }
    EXPECT_EQ(wrong, 0u) << "bits " << bits;
  }
}

// kernels.h's layout, one bit at a time.
std::vector<unsigned char> packBitByBit(const std::vector<uint8_t>& codes, int bits) {
  std::vector<unsigned char> out(packedCodeBytes(bits, codes.size()), 0);
  for (size_t i = 0; i < codes.size(); ++i)
    for (int k = 0; k < bits; ++k)
      if (codes[i] >> k & 1)
        out[(i * bits + k) / 8] |= static_cast<unsigned char>(1u << ((i * bits + k) % 8));
  return out;
}

struct Packer {
  const char* name;
  void (*pack)(const uint8_t*, size_t, int, unsigned char*);
  void (*unpack)(const unsigned char*, size_t, int, uint8_t*);
};

std::vector<Packer> packers() {
  std::vector<Packer> all = {{"scalar", packCodes, unpackCodes}};
#if defined(__x86_64__) || defined(__i386__)
  if (codecVariantSupported(CodecVariant::Avx2))
    all.push_back({"avx2", packCodesAvx2, unpackCodesAvx2});
#endif
  return all;
}

// Every packer, every width, counts 0..300 (the vector loops' edges):
// the bytes of the layout, nothing written past them, nothing read past
// them (the packed copy is exactly its size; ASan builds check the reads).
TEST(CompressFastCodecs, BitPackingIsTheLayoutOfKernelsH) {
  std::mt19937_64 rng(5);
  for (const Packer& packer : packers()) {
    for (int bits = 2; bits <= 8; ++bits) {
      for (size_t count = 0; count <= 300; ++count) {
        std::vector<uint8_t> codes(count);
        for (uint8_t& c : codes) c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
        const std::vector<unsigned char> want = packBitByBit(codes, bits);
        std::vector<unsigned char> packed(want.size() + 32, 0xee);
        packer.pack(codes.data(), count, bits, packed.data());
        ASSERT_EQ(std::vector<unsigned char>(packed.begin(), packed.begin() + want.size()), want)
            << packer.name << " " << bits << " " << count;
        for (size_t i = want.size(); i < packed.size(); ++i)
          ASSERT_EQ(packed[i], 0xee) << packer.name << " overrun " << bits << " " << count;
        std::vector<unsigned char> exact(want);
        std::vector<uint8_t> back(count + 32, 0xdd);
        packer.unpack(exact.data(), count, bits, back.data());
        ASSERT_EQ(std::vector<uint8_t>(back.begin(), back.begin() + count), codes)
            << packer.name << " " << bits << " " << count;
        for (size_t i = count; i < back.size(); ++i)
          ASSERT_EQ(back[i], 0xdd) << packer.name << " unpack overrun " << bits << " " << count;
      }
    }
  }
}

// ---- fast vs reference, byte for byte ----

struct Tables {
  KernelTable reference{};
  std::vector<std::pair<std::string, KernelTable>> fast;
  Tables() {
    addReferenceCompressionKernels(reference);
    for (CodecVariant v : kCodecVariants) {
      if (!codecVariantSupported(v)) continue;
      KernelTable t{};
      addCompressionKernels(t, v);
      fast.emplace_back(codecVariantName(v), t);
    }
    fast.emplace_back("cpuKernels", cpuKernels());
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

std::vector<unsigned char> toType(spcclDataType_t type, const std::vector<float>& v) {
  std::vector<unsigned char> out(v.size() * spcclTypeSize(type));
  for (size_t i = 0; i < v.size(); ++i) {
    if (type == spcclFloat32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t h = type == spcclFloat16 ? floatToHalf(v[i]) : floatToBfloat16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

// Every decoder of both tables on one encoding: identical bytes.
void expectSameDecodings(const KernelTable& fast, const std::string& name,
                         const QuantizerSpec& spec, const unsigned char* enc, size_t count,
                         const std::string& where) {
  for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16}) {
    const size_t bytes = count * spcclTypeSize(type);
    std::vector<unsigned char> want(bytes + 4, 0xab), got(bytes + 4, 0xab);
    tables().reference.dequantize[type](spec, enc, count, want.data());
    fast.dequantize[type](spec, enc, count, got.data());
    ASSERT_EQ(got, want) << name << " dequantize type " << type << " " << where;
  }
  std::vector<float> want(count, 0.25f), got(count, 0.25f);
  tables().reference.dequantizeAdd(spec, enc, count, want.data());
  fast.dequantizeAdd(spec, enc, count, got.data());
  ASSERT_EQ(bitsOf(got), bitsOf(want)) << name << " dequantizeAdd " << where;
}

// in: count elements of type.
void expectSameEncodings(const QuantizerSpec& spec, spcclDataType_t type,
                         const std::vector<unsigned char>& in, const std::vector<float>* residual,
                         const std::string& what) {
  const size_t count = in.size() / spcclTypeSize(type);
  const size_t bytes = quantizedBytes(spec, count);
  std::vector<unsigned char> want(bytes + 8, 0xcd);
  std::vector<float> wantResidual = residual ? *residual : std::vector<float>();
  tables().reference.quantize[type](spec, in.data(), count, want.data(),
                                    residual ? wantResidual.data() : nullptr);
  const std::string where = what + " codec " + std::to_string(int(spec.codec)) + " bits " +
                            std::to_string(spec.bits) + " block " + std::to_string(spec.blockSize) +
                            " type " + std::to_string(type) + " count " + std::to_string(count) +
                            (residual ? " feedback" : "");
  for (const auto& [name, fast] : tables().fast) {
    std::vector<unsigned char> got(bytes + 8, 0xcd);
    std::vector<float> gotResidual = residual ? *residual : std::vector<float>();
    fast.quantize[type](spec, in.data(), count, got.data(),
                        residual ? gotResidual.data() : nullptr);
    ASSERT_EQ(got, want) << name << " encoding " << where;
    if (residual) {
      ASSERT_EQ(bitsOf(gotResidual), bitsOf(wantResidual)) << name << " residual " << where;
    }
    expectSameDecodings(fast, name, spec, want.data(), count, where);
  }
}

std::vector<float> gaussian(size_t count, std::mt19937_64& rng, double sigma) {
  std::normal_distribution<double> dist(0.0, sigma);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// Blocks of 64 whose first element is +-1 (so m = 1 and x = |v| exactly),
// the rest floats around every decision point of the codec.
std::vector<float> boundaries(Codec codec, int bits, size_t count, std::mt19937_64& rng) {
  std::vector<float> near;
  for (double p : decisionPoints(codec, bits)) {
    float x = static_cast<float>(p);
    for (int i = 0; i < 3; ++i) x = std::nextafter(x, 0.0f);
    for (int i = 0; i < 7; ++i, x = std::nextafter(x, 2.0f)) near.push_back(x);
  }
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) {
    const float x = i % 64 == 0 ? 1.0f : near[rng() % near.size()];
    v[i] = rng() & 1 ? -x : x;
  }
  return v;
}

// Gaussian with inf, NaN, zeros of both signs, subnormals, and whole
// blocks of zeros and of subnormals sprinkled in.
std::vector<float> special(size_t count, std::mt19937_64& rng) {
  std::vector<float> v = gaussian(count, rng, 1.0);
  const float odd[] = {INFINITY,     -INFINITY,     NAN,     -NAN,   0.0f,    -0.0f,
                       FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, 1e-39f, FLT_MAX, -FLT_MAX};
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng() % 1000;
    if (r < 3)
      v[i] = odd[rng() % std::size(odd)];
    else if (r < 10)
      v[i] = 0.0f;
  }
  for (size_t start = 0; start + 100 < count; start += 700) {
    const bool zeros = rng() & 1;
    for (size_t i = start; i < start + 100; ++i)
      v[i] = zeros ? (rng() & 1 ? 0.0f : -0.0f) : v[i] * 1e-40f;
  }
  return v;
}

// Random bit patterns of f16 or bf16, which values converted from f32 do not
// cover: every exponent, so f16 subnormals, signalling and quiet NaNs with
// any payload; inf or NaN in about 1 element of 500 (more would make
// nearly every block a NaN block), and runs of subnormals and zeros.
std::vector<unsigned char> rawPatterns(spcclDataType_t type, size_t count, std::mt19937_64& rng) {
  const uint16_t exponent = type == spcclFloat16 ? 0x7c00 : 0x7f80;
  std::vector<uint16_t> v(count);
  for (uint16_t& h : v) {
    h = static_cast<uint16_t>(rng());
    if ((h & exponent) == exponent && rng() % 16 != 0) h &= static_cast<uint16_t>(~0x4000u);
  }
  for (size_t start = 0; start + 100 < count; start += 700)
    for (size_t i = start; i < start + 100; ++i) v[i] &= static_cast<uint16_t>(~exponent);
  std::vector<unsigned char> out(2 * count);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> residualFor(size_t count, std::mt19937_64& rng) {
  std::vector<float> r = gaussian(count, rng, 0.1);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t x = rng() % 1000;
    if (x == 0)
      r[i] = FLT_MAX;  // the sum may overflow to inf: a NaN block
    else if (x == 1)
      r[i] = -0.0f;
    else if (x < 5)
      r[i] = 1e-41f;
  }
  return r;
}

// One case per codec and width, so that each stays well inside the test
// timeout under the sanitizers.
class CompressFastCodecsByWidth : public testing::TestWithParam<std::tuple<Codec, int>> {};

TEST_P(CompressFastCodecsByWidth, EncodingsResidualsAndDecodingsEqualTheReference) {
  const auto [codec, bits] = GetParam();
  std::mt19937_64 rng(11 + 2 * bits + static_cast<int>(codec));
  const size_t longCount = 3 * 4096 + 5;
  const size_t counts[] = {0, 1, 2, 7, 9, 100, 4099, longCount};
  const size_t blockSizes[] = {1, 3, 8, 64, 256, 1000, 5000, 100000};
  const std::vector<std::pair<std::string, std::vector<float>>> inputs = {
      {"gaussian", gaussian(longCount, rng, 1.0)},
      {"heavy", gaussian(longCount, rng, 1e3)},
      {"boundaries", boundaries(codec, bits, longCount, rng)},
      {"special", special(longCount, rng)},
      {"subnormal", gaussian(longCount, rng, 1e-39)}};
  const std::vector<float> residual = residualFor(longCount, rng);
  const std::vector<std::pair<spcclDataType_t, std::vector<unsigned char>>> raw = {
      {spcclFloat16, rawPatterns(spcclFloat16, longCount, rng)},
      {spcclBfloat16, rawPatterns(spcclBfloat16, longCount, rng)}};
  // Every input in every type, and the raw patterns in theirs.
  auto inputOf = [&](size_t input, spcclDataType_t type, size_t count) {
    const size_t bytes = count * spcclTypeSize(type);
    if (input < inputs.size())
      return toType(type, std::vector<float>(inputs[input].second.begin(),
                                             inputs[input].second.begin() + count));
    const std::vector<unsigned char>& patterns = raw[input - inputs.size()].second;
    return std::vector<unsigned char>(patterns.begin(), patterns.begin() + bytes);
  };
  for (size_t input = 0; input < inputs.size() + raw.size(); ++input) {
    const bool isRaw = input >= inputs.size();
    const std::string what = isRaw ? "raw" : inputs[input].first;
    for (size_t block : blockSizes) {
      for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16}) {
        if (isRaw && type != raw[input - inputs.size()].first) continue;
        for (size_t count : counts) {
          // Short counts on every combination, the long ones on f32 and on
          // the raw patterns.
          if (count > 100 && type != spcclFloat32 && !isRaw && block != 256 && block != 1000)
            continue;
          const QuantizerSpec spec{codec, bits, block};
          const std::vector<unsigned char> in = inputOf(input, type, count);
          const std::vector<float> r(residual.begin(), residual.begin() + count);
          expectSameEncodings(spec, type, in, nullptr, what);
          expectSameEncodings(spec, type, in, &r, what);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecsAndWidths, CompressFastCodecsByWidth,
                         testing::Combine(testing::Values(Codec::Piecewise, Codec::Linear),
                                          testing::Range(kMinQuantizerBits,
                                                         kMaxQuantizerBits + 1)));

// Any bytes are an encoding the decoder must read like the reference:
// random codes under scales that are random, zero, subnormal, inf or NaN.
TEST(CompressFastCodecs, DecodingsOfArbitraryBytesEqualTheReference) {
  std::mt19937_64 rng(13);
  // Besides the obvious: scales whose decodings at level 1 (the top code)
  // are f16 or bf16 ties (to inf at 65520), f16 subnormals, and NaNs with
  // payloads, signalling ones included, that a narrowing must keep.
  const float signallingNaN = std::bit_cast<float>(0x7fa00001u);
  const float lowPayloadNaN = std::bit_cast<float>(0x7f800001u);  // signalling too
  const float negativeQuietNaN = std::bit_cast<float>(0xffc0abcdu);
  const float scales[] = {
      0.0f,       -0.0f,      1.0f,          -2.5f,         FLT_TRUE_MIN,    1e-39f,
      FLT_MAX,    INFINITY,   NAN,           65504.0f,      65520.0f,        -65520.0f,
      0x1.002p0f, 0x1.006p0f, 0x3p-25f,      0x1p-25f,      -0x5p-26f,       6.1e-5f,
      0x1.01p0f,  -0x1.03p0f, signallingNaN, lowPayloadNaN, negativeQuietNaN};
  for (int bits = kMinQuantizerBits; bits <= kMaxQuantizerBits; ++bits) {
    for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
      for (size_t block : {size_t{1}, size_t{5}, size_t{64}, size_t{4100}}) {
        for (size_t count : {size_t{0}, size_t{1}, size_t{13}, size_t{9000}}) {
          const QuantizerSpec spec{codec, bits, block};
          std::vector<unsigned char> enc(quantizedBytes(spec, count));
          for (unsigned char& b : enc) b = static_cast<unsigned char>(rng());
          for (size_t b = 0; b < quantizedBlockCount(spec, count); ++b) {
            const float m = rng() % 3 ? static_cast<float>(rng() % 1000) / 7.0f
                                      : scales[rng() % std::size(scales)];
            std::memcpy(enc.data() + 4 * b, &m, 4);
          }
          for (const auto& [name, fast] : tables().fast) {
            expectSameDecodings(fast, name, spec, enc.data(), count,
                                "bits " + std::to_string(bits) + " block " + std::to_string(block) +
                                    " count " + std::to_string(count));
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Element i of a tensor of type, widened as element_format.h does.
float widenedAt(spcclDataType_t type, const std::vector<unsigned char>& in, size_t i) {
  if (type == spcclFloat32) {
    float f;
    std::memcpy(&f, in.data() + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, in.data() + 2 * i, 2);
  return type == spcclFloat16 ? HalfFormat::load(h) : Bfloat16Format::load(h);
}

// widenAdd (the schedules' loadInputChunk) of every variant: the sum of
// element_format.h's load, bit for bit, for every type, odd counts and
// counts across the conversion chunks, on random bit patterns (NaN sums
// included: the widened NaN is the only NaN operand, so its payload is the
// sum's).
TEST(CompressFastCodecs, WidenAddEqualsElementFormatLoads) {
  std::mt19937_64 rng(17);
  for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{9}, size_t{100}, size_t{1029}}) {
      std::vector<unsigned char> in(count * spcclTypeSize(type));
      for (unsigned char& b : in) b = static_cast<unsigned char>(rng());
      const std::vector<float> start = gaussian(count + 1, rng, 1.0);
      std::vector<float> want(start);  // one more than count: nothing is written past
      for (size_t i = 0; i < count; ++i) want[i] += widenedAt(type, in, i);
      for (const auto& [name, fast] : tables().fast) {
        std::vector<float> got(start);
        fast.widenAdd[type](got.data(), in.data(), count);
        ASSERT_EQ(bitsOf(got), bitsOf(want)) << name << " type " << type << " count " << count;
      }
    }
  }
}

// The kernel table the engine uses holds the fastest variant the CPU runs:
// F16C's f16 codecs wherever the CPU has AVX2 and F16C.
TEST(CompressFastCodecs, CpuKernelsHoldTheFastestVariant) {
  const CodecVariant chosen = fastestCodecVariant();
  ASSERT_TRUE(codecVariantSupported(chosen));
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2"), f16c = __builtin_cpu_supports("f16c");
  EXPECT_EQ(chosen, avx2 && f16c ? CodecVariant::Avx2F16c
                    : avx2       ? CodecVariant::Avx2
                                 : CodecVariant::Baseline);
  EXPECT_EQ(codecVariantSupported(CodecVariant::Avx2F16c), avx2 && f16c);
#endif
  KernelTable want{};
  addCompressionKernels(want, chosen);
  const KernelTable& used = cpuKernels();
  for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16}) {
    EXPECT_EQ(used.quantize[type], want.quantize[type]) << type;
    EXPECT_EQ(used.dequantize[type], want.dequantize[type]) << type;
    EXPECT_EQ(used.widenAdd[type], want.widenAdd[type]) << type;
  }
  EXPECT_EQ(used.dequantizeAdd, want.dequantizeAdd);
  // The variants differ where they should, so the comparisons above tell
  // them apart: F16C only in f16.
  if (!codecVariantSupported(CodecVariant::Avx2F16c)) return;
  KernelTable plain{}, withF16c{};
  addCompressionKernels(plain, CodecVariant::Avx2);
  addCompressionKernels(withF16c, CodecVariant::Avx2F16c);
  EXPECT_NE(withF16c.quantize[spcclFloat16], plain.quantize[spcclFloat16]);
  EXPECT_NE(withF16c.dequantize[spcclFloat16], plain.dequantize[spcclFloat16]);
  EXPECT_NE(withF16c.widenAdd[spcclFloat16], plain.widenAdd[spcclFloat16]);
  EXPECT_EQ(withF16c.quantize[spcclBfloat16], plain.quantize[spcclBfloat16]);
  EXPECT_EQ(withF16c.quantize[spcclFloat32], plain.quantize[spcclFloat32]);
}

}  // namespace
}  // namespace spccl::kernels

// The CPU reduce/divide kernels against a straightforward scalar reference
// written from the semantics in kernels/kernels.h: every type x op, odd
// sizes and offsets (vector bodies and tails), special float values,
// operand swap and in-place aliasing, integer wrap-around.
//
// The float reference computes in double and rounds once to the type (for
// f16/bf16 via float, exact for +, *, / since double has more than
// 2p + 2 bits: Figueroa, "When is double rounding innocuous?", 1995); the
// f16/bf16 conversions themselves are checked in test_half_float.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/cpu/half_float.h"
#include "kernels/kernels.h"

namespace spccl::kernels {
namespace {

constexpr spcclRedOp_t kAllOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};

// ---- the reference, one element at a time ----

template <typename F>
F referenceCanonicalNaN() {
  return std::numeric_limits<F>::quiet_NaN();
}

// min/max as kernels.h specifies them, spelled out case by case.
template <typename F>
F referenceMinMax(spcclRedOp_t op, F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return referenceCanonicalNaN<F>();
  if (a == 0 && b == 0) {
    const bool negative =
        op == spcclMin ? std::signbit(a) || std::signbit(b) : std::signbit(a) && std::signbit(b);
    return negative ? F(-0.0) : F(0.0);
  }
  if (op == spcclMin) return a < b ? a : b;
  return a > b ? a : b;
}

template <typename F>
F referenceFloat(spcclRedOp_t op, F a, F b) {
  double exact = 0;
  switch (op) {
    case spcclSum:
    case spcclAvg:
      exact = static_cast<double>(a) + static_cast<double>(b);
      break;
    case spcclProd:
      exact = static_cast<double>(a) * static_cast<double>(b);
      break;
    default:
      return referenceMinMax(op, a, b);
  }
  return std::isnan(exact) ? referenceCanonicalNaN<F>() : static_cast<F>(exact);
}

template <typename F>
F referenceFloatDivide(F v, int divisor) {
  const double quotient = static_cast<double>(v) / divisor;
  return std::isnan(quotient) ? referenceCanonicalNaN<F>() : static_cast<F>(quotient);
}

// ---- one descriptor per data type: storage, inputs worth testing, reference ----

template <typename T, spcclDataType_t kTypeValue>
struct IntegerCase {
  using Storage = T;
  static constexpr spcclDataType_t kType = kTypeValue;
  static constexpr bool kSigned = std::is_signed_v<T>;

  static T random(std::mt19937_64& rng) {
    constexpr T kSpecial[] = {0,
                              1,
                              static_cast<T>(-1),
                              2,
                              std::numeric_limits<T>::min(),
                              std::numeric_limits<T>::max(),
                              std::numeric_limits<T>::min() + 1};
    if (rng() % 8 == 0) return kSpecial[rng() % std::size(kSpecial)];
    if (rng() % 4 == 0) return static_cast<T>(static_cast<int64_t>(rng() % 41) - 20);  // small
    return static_cast<T>(rng());
  }
  // Modular arithmetic in 64 bits, then wrapped to T (C++20 conversions).
  static T reduce(spcclRedOp_t op, T a, T b) {
    switch (op) {
      case spcclSum:
      case spcclAvg:
        return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      case spcclProd:
        return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      case spcclMax:
        return std::max(a, b);
      default:
        return std::min(a, b);
    }
  }
  static T divide(T v, int divisor) {
    return static_cast<T>(static_cast<__int128>(v) / divisor);  // C++ '/' truncates toward zero
  }
};

template <typename F, spcclDataType_t kTypeValue>
struct FloatCase {
  using Storage = F;
  static constexpr spcclDataType_t kType = kTypeValue;
  static constexpr bool kSigned = true;
  using Bits = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;

  static F random(std::mt19937_64& rng) {
    using L = std::numeric_limits<F>;
    const F kSpecial[] = {F(0.0),
                          F(-0.0),
                          L::infinity(),
                          -L::infinity(),
                          L::quiet_NaN(),
                          -L::quiet_NaN(),
                          L::signaling_NaN(),
                          std::bit_cast<F>(std::bit_cast<Bits>(L::quiet_NaN()) | 0x1234),
                          L::denorm_min(),
                          -L::denorm_min(),
                          L::min() - L::denorm_min(),  // largest subnormal
                          L::min(),
                          L::max(),
                          -L::max(),
                          F(1.0),
                          F(-1.0)};
    switch (rng() % 8) {
      case 0:
        return kSpecial[rng() % std::size(kSpecial)];
      case 1:
        return std::bit_cast<F>(static_cast<Bits>(rng()));  // anything at all
      default: {
        // Comparable magnitudes, so sums round in interesting ways.
        std::uniform_real_distribution<F> mantissa(-2, 2);
        return std::ldexp(mantissa(rng), static_cast<int>(rng() % 16) - 8);
      }
    }
  }
  static F reduce(spcclRedOp_t op, F a, F b) { return referenceFloat(op, a, b); }
  static F divide(F v, int divisor) { return referenceFloatDivide(v, divisor); }
};

template <spcclDataType_t kTypeValue, float (*kDecode)(uint16_t), uint16_t (*kEncode)(float),
          uint16_t kInfinity>
struct NarrowFloatCase {
  using Storage = uint16_t;
  static constexpr spcclDataType_t kType = kTypeValue;
  static constexpr bool kSigned = true;

  static uint16_t random(std::mt19937_64& rng) {
    const uint16_t kSpecial[] = {0x0000,
                                 0x8000,
                                 kInfinity,
                                 static_cast<uint16_t>(kInfinity | 0x8000),
                                 static_cast<uint16_t>(kInfinity + 1),  // signalling NaN
                                 static_cast<uint16_t>((kInfinity | 0x8000) + 0x23),
                                 0x0001,
                                 0x8001,
                                 static_cast<uint16_t>(kInfinity - 1)};
    switch (rng() % 4) {
      case 0:
        return kSpecial[rng() % std::size(kSpecial)];
      case 1:
        return static_cast<uint16_t>(rng());  // every pattern, NaNs and subnormals included
      default: {
        std::uniform_real_distribution<float> mantissa(-2, 2);
        return kEncode(std::ldexp(mantissa(rng), static_cast<int>(rng() % 8) - 4));
      }
    }
  }
  static uint16_t reduce(spcclRedOp_t op, uint16_t a, uint16_t b) {
    return kEncode(referenceFloat(op, kDecode(a), kDecode(b)));
  }
  static uint16_t divide(uint16_t v, int divisor) {
    return kEncode(referenceFloatDivide(kDecode(v), divisor));
  }
};

using Int8Case = IntegerCase<int8_t, spcclInt8>;
using Uint8Case = IntegerCase<uint8_t, spcclUint8>;
using Int32Case = IntegerCase<int32_t, spcclInt32>;
using Uint32Case = IntegerCase<uint32_t, spcclUint32>;
using Int64Case = IntegerCase<int64_t, spcclInt64>;
using Uint64Case = IntegerCase<uint64_t, spcclUint64>;
using Float16Case = NarrowFloatCase<spcclFloat16, halfToFloat, floatToHalf, 0x7c00>;
using Float32Case = FloatCase<float, spcclFloat32>;
using Float64Case = FloatCase<double, spcclFloat64>;
using Bfloat16Case = NarrowFloatCase<spcclBfloat16, bfloat16ToFloat, floatToBfloat16, 0x7f80>;

// ---- helpers ----

template <typename Case>
std::vector<typename Case::Storage> randomBuffer(size_t count, std::mt19937_64& rng) {
  std::vector<typename Case::Storage> values(count);
  for (auto& v : values) v = Case::random(rng);
  return values;
}

template <typename S>
uint64_t bitsOf(S v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(S));
  return bits;
}

// Bitwise comparison; names the first differing element.
template <typename S>
testing::AssertionResult sameBits(const S* got, const S* want, size_t count) {
  if (count == 0 || std::memcmp(got, want, count * sizeof(S)) == 0) {
    return testing::AssertionSuccess();
  }
  size_t i = 0;
  while (bitsOf(got[i]) == bitsOf(want[i])) ++i;
  return testing::AssertionFailure() << "element " << i << " of " << count << ": got 0x" << std::hex
                                     << bitsOf(got[i]) << ", want 0x" << bitsOf(want[i]);
}

template <typename Case>
void runReduce(spcclRedOp_t op, void* dst, const void* a, const void* b, size_t count) {
  reduce(cpuKernels(), Case::kType, op, dst, a, b, count);
}

template <typename Case>
class ReduceKernels : public testing::Test {};

using AllTypes = testing::Types<Int8Case, Uint8Case, Int32Case, Uint32Case, Int64Case, Uint64Case,
                                Float16Case, Float32Case, Float64Case, Bfloat16Case>;
TYPED_TEST_SUITE(ReduceKernels, AllTypes);

// Sizes 0..67 at element offsets 0 and 1 cover every vector-body/tail split
// and misalignment; 1000003 is large and odd.
TYPED_TEST(ReduceKernels, MatchesReferenceAtEverySize) {
  using Case = TypeParam;
  using S = typename Case::Storage;
  std::mt19937_64 rng(42 + Case::kType);
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 67; ++n) sizes.push_back(n);
  sizes.push_back(1000003);
  for (const spcclRedOp_t op : kAllOps) {
    for (const size_t count : sizes) {
      for (const size_t offset : {size_t{0}, size_t{1}}) {
        if (count > 67 && offset > 0) continue;
        const auto a = randomBuffer<Case>(count + offset, rng);
        const auto b = randomBuffer<Case>(count + offset, rng);
        std::vector<S> want(count);
        for (size_t i = 0; i < count; ++i) want[i] = Case::reduce(op, a[offset + i], b[offset + i]);
        std::vector<S> got(count + offset);
        runReduce<Case>(op, got.data() + offset, a.data() + offset, b.data() + offset, count);
        ASSERT_TRUE(sameBits(got.data() + offset, want.data(), count))
            << spcclOpName(op) << " count " << count << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(ReduceKernels, CountZeroWritesNothing) {
  using Case = TypeParam;
  using S = typename Case::Storage;
  std::mt19937_64 rng(7);
  const auto a = randomBuffer<Case>(4, rng);
  const auto b = randomBuffer<Case>(4, rng);
  for (const spcclRedOp_t op : kAllOps) {
    std::vector<S> dst(4, S(0x5a));
    const std::vector<S> before = dst;
    runReduce<Case>(op, dst.data(), a.data(), b.data(), 0);
    EXPECT_TRUE(sameBits(dst.data(), before.data(), dst.size())) << spcclOpName(op);
  }
  std::vector<S> buf(4, S(0x5a));
  const std::vector<S> before = buf;
  cpuKernels().divide[Case::kType](buf.data(), 0, 3);
  EXPECT_TRUE(sameBits(buf.data(), before.data(), buf.size()));
}

// A pairwise exchange leaves both partners with op(mine, theirs) and
// op(theirs, mine): they must be the same bits, NaNs and zeros included.
TYPED_TEST(ReduceKernels, SwappedOperandsGiveIdenticalBits) {
  using Case = TypeParam;
  using S = typename Case::Storage;
  std::mt19937_64 rng(99);
  const size_t count = 4099;
  const auto a = randomBuffer<Case>(count, rng);
  const auto b = randomBuffer<Case>(count, rng);
  for (const spcclRedOp_t op : kAllOps) {
    std::vector<S> ab(count), ba(count);
    runReduce<Case>(op, ab.data(), a.data(), b.data(), count);
    runReduce<Case>(op, ba.data(), b.data(), a.data(), count);
    EXPECT_TRUE(sameBits(ab.data(), ba.data(), count)) << spcclOpName(op);
  }
}

TYPED_TEST(ReduceKernels, InPlaceMatchesOutOfPlace) {
  using Case = TypeParam;
  using S = typename Case::Storage;
  std::mt19937_64 rng(5);
  const size_t count = 1001;
  const auto a = randomBuffer<Case>(count, rng);
  const auto b = randomBuffer<Case>(count, rng);
  for (const spcclRedOp_t op : kAllOps) {
    std::vector<S> want(count);
    runReduce<Case>(op, want.data(), a.data(), b.data(), count);

    auto intoA = a;
    runReduce<Case>(op, intoA.data(), intoA.data(), b.data(), count);
    EXPECT_TRUE(sameBits(intoA.data(), want.data(), count)) << spcclOpName(op) << " dst == a";

    auto intoB = b;
    runReduce<Case>(op, intoB.data(), a.data(), intoB.data(), count);
    EXPECT_TRUE(sameBits(intoB.data(), want.data(), count)) << spcclOpName(op) << " dst == b";

    std::vector<S> self(count), selfWant(count);
    for (size_t i = 0; i < count; ++i) selfWant[i] = Case::reduce(op, a[i], a[i]);
    self = a;
    runReduce<Case>(op, self.data(), self.data(), self.data(), count);
    EXPECT_TRUE(sameBits(self.data(), selfWant.data(), count))
        << spcclOpName(op) << " dst == a == b";
  }
}

TYPED_TEST(ReduceKernels, DivideMatchesReference) {
  using Case = TypeParam;
  using S = typename Case::Storage;
  std::mt19937_64 rng(11 + Case::kType);
  std::vector<int> divisors = {1, 2, 3, 7, 8, 13, 64, 1000};
  if (Case::kSigned) divisors.insert(divisors.end(), {-1, -2, -3, -7});
  for (const int divisor : divisors) {
    for (const size_t count :
         {size_t{1}, size_t{2}, size_t{3}, size_t{17}, size_t{67}, size_t{1000003}}) {
      const auto values = randomBuffer<Case>(count, rng);
      std::vector<S> want(count);
      for (size_t i = 0; i < count; ++i) want[i] = Case::divide(values[i], divisor);
      auto got = values;
      cpuKernels().divide[Case::kType](got.data(), count, divisor);
      ASSERT_TRUE(sameBits(got.data(), want.data(), count))
          << "divisor " << divisor << " count " << count;
    }
  }
}

// ---- specific values, written out so that they read as the spec ----

template <typename S>
S reduceOne(spcclDataType_t type, spcclRedOp_t op, S a, S b) {
  S out{};
  reduce(cpuKernels(), type, op, &out, &a, &b, 1);
  return out;
}

template <typename S>
S divideOne(spcclDataType_t type, S v, int divisor) {
  cpuKernels().divide[type](&v, 1, divisor);
  return v;
}

TEST(ReduceKernelsTable, EveryEntryIsFilled) {
  const KernelTable& table = cpuKernels();
  EXPECT_STREQ(table.name, "cpu");
  for (int type = 0; type < spcclNumTypes; ++type) {
    for (int op = 0; op < spcclNumOps; ++op)
      EXPECT_NE(table.reduce[type][op], nullptr) << type << op;
    EXPECT_NE(table.divide[type], nullptr) << type;
  }
}

TEST(ReduceKernelsValues, IntegersWrapAround) {
  EXPECT_EQ(reduceOne<int8_t>(spcclInt8, spcclSum, 127, 1), -128);
  EXPECT_EQ(reduceOne<int8_t>(spcclInt8, spcclProd, -128, -1), -128);
  EXPECT_EQ(reduceOne<int8_t>(spcclInt8, spcclProd, 16, 16), 0);
  EXPECT_EQ(reduceOne<uint8_t>(spcclUint8, spcclSum, 255, 1), 0);
  EXPECT_EQ(reduceOne<uint8_t>(spcclUint8, spcclProd, 255, 255), 1);
  EXPECT_EQ(reduceOne<int32_t>(spcclInt32, spcclSum, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(reduceOne<int32_t>(spcclInt32, spcclProd, 65536, 65536), 0);
  EXPECT_EQ(reduceOne<uint32_t>(spcclUint32, spcclProd, UINT32_MAX, UINT32_MAX), 1u);
  EXPECT_EQ(reduceOne<int64_t>(spcclInt64, spcclSum, INT64_MIN, -1), INT64_MAX);
  EXPECT_EQ(reduceOne<int64_t>(spcclInt64, spcclProd, INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(spcclUint64, spcclSum, UINT64_MAX, 2), 1u);
  EXPECT_EQ(reduceOne<uint64_t>(spcclUint64, spcclProd, UINT64_MAX, UINT64_MAX), 1u);
  EXPECT_EQ(reduceOne<int8_t>(spcclInt8, spcclMin, -128, 127), -128);
  EXPECT_EQ(reduceOne<uint64_t>(spcclUint64, spcclMax, UINT64_MAX, 0), UINT64_MAX);
}

TEST(ReduceKernelsValues, IntegerDivideTruncatesTowardZero) {
  EXPECT_EQ(divideOne<int32_t>(spcclInt32, -7, 2), -3);
  EXPECT_EQ(divideOne<int32_t>(spcclInt32, 7, -2), -3);
  EXPECT_EQ(divideOne<int32_t>(spcclInt32, -7, -2), 3);
  EXPECT_EQ(divideOne<int8_t>(spcclInt8, -128, -1), -128);  // wraps, as the sum would
  EXPECT_EQ(divideOne<int8_t>(spcclInt8, -128, 1000), 0);
  EXPECT_EQ(divideOne<int64_t>(spcclInt64, INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(divideOne<int64_t>(spcclInt64, INT64_MIN, 2), INT64_MIN / 2);
  EXPECT_EQ(divideOne<uint8_t>(spcclUint8, 255, 2), 127);
  EXPECT_EQ(divideOne<uint8_t>(spcclUint8, 255, 256), 0);
  EXPECT_EQ(divideOne<uint64_t>(spcclUint64, UINT64_MAX, 3), UINT64_MAX / 3);
}

template <typename F>
void expectSignedZeroAndNaNRules(spcclDataType_t type) {
  using Bits = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;
  const auto bits = [](F v) { return std::bit_cast<Bits>(v); };
  const F pz = 0.0, nz = -0.0, nan = std::numeric_limits<F>::quiet_NaN();
  const F inf = std::numeric_limits<F>::infinity();
  const Bits canonical = bits(nan);
  EXPECT_EQ(bits(reduceOne(type, spcclMin, pz, nz)), bits(nz));
  EXPECT_EQ(bits(reduceOne(type, spcclMin, nz, pz)), bits(nz));
  EXPECT_EQ(bits(reduceOne(type, spcclMax, pz, nz)), bits(pz));
  EXPECT_EQ(bits(reduceOne(type, spcclMax, nz, pz)), bits(pz));
  EXPECT_EQ(bits(reduceOne(type, spcclSum, nz, nz)), bits(nz));
  EXPECT_EQ(bits(reduceOne(type, spcclSum, pz, nz)), bits(pz));
  const F negativePayloadNaN = std::bit_cast<F>(bits(-nan) | 0x15);
  const F signallingNaN = std::numeric_limits<F>::signaling_NaN();
  for (const spcclRedOp_t op : kAllOps) {
    for (const F weird : {negativePayloadNaN, signallingNaN, nan}) {
      EXPECT_EQ(bits(reduceOne(type, op, weird, F(1))), canonical) << spcclOpName(op);
      EXPECT_EQ(bits(reduceOne(type, op, F(1), weird)), canonical) << spcclOpName(op);
      EXPECT_EQ(bits(reduceOne(type, op, weird, -inf)), canonical) << spcclOpName(op);
    }
  }
  EXPECT_EQ(bits(reduceOne(type, spcclSum, inf, -inf)), canonical);
  EXPECT_EQ(bits(reduceOne(type, spcclProd, inf, pz)), canonical);
  EXPECT_EQ(bits(reduceOne(type, spcclMax, inf, std::numeric_limits<F>::max())), bits(inf));
  EXPECT_EQ(bits(reduceOne(type, spcclMin, -inf, -std::numeric_limits<F>::max())), bits(-inf));
  const F tiny = std::numeric_limits<F>::denorm_min();
  EXPECT_EQ(bits(reduceOne(type, spcclSum, tiny, tiny)), bits(tiny * 2));  // subnormals not flushed
  EXPECT_EQ(bits(reduceOne(type, spcclMin, tiny, -tiny)), bits(-tiny));
  EXPECT_EQ(bits(divideOne(type, tiny * 4, 2)), bits(tiny * 2));
  EXPECT_EQ(bits(divideOne(type, negativePayloadNaN, 2)), canonical);
}

TEST(ReduceKernelsValues, Float32SignedZeroAndNaN) {
  expectSignedZeroAndNaNRules<float>(spcclFloat32);
}
TEST(ReduceKernelsValues, Float64SignedZeroAndNaN) {
  expectSignedZeroAndNaNRules<double>(spcclFloat64);
}

TEST(ReduceKernelsValues, NarrowFloatSignedZeroAndNaN) {
  for (const auto& [type, inf, canonical] :
       {std::tuple{spcclFloat16, uint16_t{0x7c00}, uint16_t{0x7e00}},
        std::tuple{spcclBfloat16, uint16_t{0x7f80}, uint16_t{0x7fc0}}}) {
    SCOPED_TRACE(type);
    const uint16_t pz = 0x0000, nz = 0x8000, one = type == spcclFloat16 ? 0x3c00 : 0x3f80;
    EXPECT_EQ(reduceOne(type, spcclMin, pz, nz), nz);
    EXPECT_EQ(reduceOne(type, spcclMin, nz, pz), nz);
    EXPECT_EQ(reduceOne(type, spcclMax, nz, pz), pz);
    EXPECT_EQ(reduceOne(type, spcclMax, pz, nz), pz);
    for (const spcclRedOp_t op : kAllOps) {
      for (const uint16_t nan :
           {static_cast<uint16_t>(inf | 1), static_cast<uint16_t>(inf | 0x8033), canonical}) {
        EXPECT_EQ(reduceOne(type, op, nan, one), canonical) << spcclOpName(op) << std::hex << nan;
        EXPECT_EQ(reduceOne(type, op, one, nan), canonical) << spcclOpName(op) << std::hex << nan;
      }
    }
    EXPECT_EQ(reduceOne(type, spcclSum, inf, static_cast<uint16_t>(inf | 0x8000)), canonical);
    EXPECT_EQ(reduceOne(type, spcclSum, uint16_t{1}, uint16_t{1}), 2);  // subnormals add exactly
    EXPECT_EQ(divideOne(type, static_cast<uint16_t>(inf | 0x8000), 3), inf | 0x8000);
  }
}

// f16 is computed in f32 and rounded once, to nearest even.
TEST(ReduceKernelsValues, Float16RoundsOnceToNearestEven) {
  const uint16_t one = 0x3c00, onePlusUlp = 0x3c01, halfUlp = 0x1000;  // 2^-11
  EXPECT_EQ(reduceOne(spcclFloat16, spcclSum, one, halfUlp), one);     // tie -> even
  EXPECT_EQ(reduceOne(spcclFloat16, spcclSum, onePlusUlp, halfUlp),
            uint16_t{0x3c02});  // tie -> even
  EXPECT_EQ(reduceOne(spcclFloat16, spcclSum, uint16_t{0x7bff}, uint16_t{0x4c00}),
            0x7c00);  // 65504+16: inf
  EXPECT_EQ(reduceOne(spcclFloat16, spcclSum, uint16_t{0x7bff}, uint16_t{0x4800}),
            0x7bff);  // 65504+8
  EXPECT_EQ(reduceOne(spcclFloat16, spcclProd, uint16_t{0x0001}, uint16_t{0x3800}),
            0x0000);                                                          // 2^-25: tie -> 0
  EXPECT_EQ(divideOne(spcclFloat16, uint16_t{0x3c00}, 3), uint16_t{0x3555});  // 1/3
}

}  // namespace
}  // namespace spccl::kernels

// The sparse CPU kernels (kernels/sparse_kernels.h) against scalar
// references written from the header's semantics: zero means "compares
// equal to 0" (both signed zeros, never NaN), extraction in ascending order,
// scatterReduce in i order (duplicates combine), for all ten types and sizes
// around the 64-element blocks of extractNonZeros.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/half_float.h"
#include "kernels/kernels.h"
#include "kernels/sparse_kernels.h"

namespace spccl::kernels {
namespace {

// ---- one descriptor per type: storage, a random value, zero test and sum ----

template <typename T, spcclDataType_t kTypeValue>
struct IntegerType {
  using Storage = T;
  static constexpr spcclDataType_t kType = kTypeValue;
  static T random(std::mt19937_64& rng) {
    if (rng() % 8 == 0) return std::numeric_limits<T>::min();
    if (rng() % 8 == 0) return std::numeric_limits<T>::max();
    return static_cast<T>(rng());
  }
  static bool isZero(T v) { return v == 0; }
  static T sum(T a, T b) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
};

template <typename F, spcclDataType_t kTypeValue>
struct FloatType {
  using Storage = F;
  static constexpr spcclDataType_t kType = kTypeValue;
  static F random(std::mt19937_64& rng) {
    const F special[] = {F(-0.0),
                         std::numeric_limits<F>::quiet_NaN(),
                         -std::numeric_limits<F>::quiet_NaN(),
                         std::numeric_limits<F>::infinity(),
                         std::numeric_limits<F>::denorm_min(),
                         F(1.5),
                         F(-2.25)};
    if (rng() % 4 == 0) return special[rng() % std::size(special)];
    return static_cast<F>(std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, -3));
  }
  static bool isZero(F v) { return v == F(0); }
  static F sum(F a, F b) {
    const F s = a + b;
    return s != s ? std::numeric_limits<F>::quiet_NaN() : s;
  }
};

// f16 / bf16: the value the bits stand for, through the (separately tested)
// conversions; sums round once from float.
template <spcclDataType_t kTypeValue>
struct NarrowType {
  using Storage = uint16_t;
  static constexpr spcclDataType_t kType = kTypeValue;
  static constexpr bool kHalf = kTypeValue == spcclFloat16;
  static float toFloat(uint16_t v) { return kHalf ? halfToFloat(v) : bfloat16ToFloat(v); }
  static uint16_t fromFloat(float f) { return kHalf ? floatToHalf(f) : floatToBfloat16(f); }
  static uint16_t random(std::mt19937_64& rng) {
    const uint16_t special[] = {0x8000, 0x0001, 0x8001,
                                kHalf ? uint16_t{0x7c01} : uint16_t{0x7f81}};
    if (rng() % 4 == 0) return special[rng() % std::size(special)];
    return static_cast<uint16_t>(rng());
  }
  static bool isZero(uint16_t v) { return toFloat(v) == 0.0f; }
  static uint16_t sum(uint16_t a, uint16_t b) {
    const float s = toFloat(a) + toFloat(b);
    return s != s ? (kHalf ? 0x7e00 : 0x7fc0) : fromFloat(s);
  }
};

template <typename S>
bool sameBits(const S& a, const S& b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0;
}

// About a third non-zero, with runs of zeros long enough to skip whole blocks.
template <typename Type>
std::vector<typename Type::Storage> sparseInput(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<typename Type::Storage> dense(count, typename Type::Storage{});
  for (size_t i = 0; i < count; ++i) {
    if ((i / 200) % 3 == 1) continue;  // a zero run of 200
    if (rng() % 3 == 0) dense[i] = Type::random(rng);
  }
  return dense;
}

template <typename Type>
void checkExtract(size_t count) {
  using S = typename Type::Storage;
  const std::vector<S> dense = sparseInput<Type>(count, count * 31 + Type::kType);
  std::vector<uint64_t> expectedIndices;
  for (size_t i = 0; i < count; ++i) {
    if (!Type::isZero(dense[i])) expectedIndices.push_back(i);
  }
  ASSERT_EQ(countNonZeros(Type::kType, dense.data(), count), expectedIndices.size());
  // Sized exactly: a write past the non-zeros would be caught under ASan.
  std::vector<uint64_t> indices(expectedIndices.size());
  std::vector<S> values(expectedIndices.size());
  ASSERT_EQ(extractNonZeros(Type::kType, dense.data(), count, indices.data(), values.data(),
                            indices.size()),
            expectedIndices.size());
  EXPECT_EQ(indices, expectedIndices);
  for (size_t i = 0; i < indices.size(); ++i) {
    ASSERT_TRUE(sameBits(values[i], dense[indices[i]])) << "entry " << i;
  }
}

// A capacity below the count: the first `capacity` pairs are written,
// nothing past them (buffers sized exactly, for ASan), and the return value
// is still the full count.
template <typename Type>
void checkExtractCutShort(size_t count) {
  using S = typename Type::Storage;
  const std::vector<S> dense = sparseInput<Type>(count, count * 17 + Type::kType);
  const size_t total = countNonZeros(Type::kType, dense.data(), count);
  const size_t capacity = total / 2;
  std::vector<uint64_t> indices(capacity), full(total);
  std::vector<S> values(capacity), fullValues(total);
  extractNonZeros(Type::kType, dense.data(), count, full.data(), fullValues.data(), total);
  ASSERT_EQ(
      extractNonZeros(Type::kType, dense.data(), count, indices.data(), values.data(), capacity),
      total);
  EXPECT_TRUE(std::equal(indices.begin(), indices.end(), full.begin()));
}

template <typename Type>
void checkScatterGather(size_t count) {
  using S = typename Type::Storage;
  std::mt19937_64 rng(count + 7);
  std::vector<S> dense(count);
  for (S& v : dense) v = Type::random(rng);
  const size_t nnz = count * 2;  // duplicates are certain
  std::vector<uint64_t> indices(nnz);
  std::vector<S> values(nnz);
  for (size_t i = 0; i < nnz; ++i) {
    indices[i] = count == 0 ? 0 : rng() % count;
    values[i] = Type::random(rng);
  }
  const size_t used = count == 0 ? 0 : nnz;
  std::vector<S> expected = dense;
  for (size_t i = 0; i < used; ++i) {
    expected[indices[i]] = Type::sum(expected[indices[i]], values[i]);
  }
  std::vector<S> gathered(used);
  gatherValues(Type::kType, dense.data(), indices.data(), used, gathered.data());
  for (size_t i = 0; i < used; ++i) ASSERT_TRUE(sameBits(gathered[i], dense[indices[i]]));

  std::vector<S> reduced = dense;
  scatterReduce(Type::kType, spcclSum, reduced.data(), indices.data(), values.data(), used);
  for (size_t i = 0; i < count; ++i) ASSERT_TRUE(sameBits(reduced[i], expected[i])) << "at " << i;
  std::vector<S> averaged = dense;  // Avg reduces as Sum
  scatterReduce(Type::kType, spcclAvg, averaged.data(), indices.data(), values.data(), used);
  for (size_t i = 0; i < count; ++i) ASSERT_TRUE(sameBits(averaged[i], expected[i])) << "at " << i;
}

template <typename Type>
void checkType() {
  SCOPED_TRACE(spcclTypeName(Type::kType));
  for (size_t count : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{129},
                       size_t{1001}, size_t{100003}}) {
    SCOPED_TRACE(count);
    checkExtract<Type>(count);
    checkExtractCutShort<Type>(count);
    checkScatterGather<Type>(count < 5000 ? count : 5000);
  }
}

template <typename... Types>
void checkAllTypes() {
  (checkType<Types>(), ...);
}

// Selects a scan mask for one test's lifetime, then the best again.
class ScopedScanMask {
 public:
  explicit ScopedScanMask(ScanMask mask) { selectScanMask(mask); }
  ~ScopedScanMask() { selectScanMask(ScanMask::Best); }
  ScopedScanMask(const ScopedScanMask&) = delete;
  ScopedScanMask& operator=(const ScopedScanMask&) = delete;
};

// The SSE2 baseline of the scans (nonzero_mask.h), which a CPU with AVX2
// never takes unless asked.
TEST(SparseKernels, BaselineScanAgainstScalarReference) {
  ScopedScanMask baseline(ScanMask::Baseline);
  checkAllTypes<IntegerType<int8_t, spcclInt8>, IntegerType<uint8_t, spcclUint8>,
                IntegerType<int32_t, spcclInt32>, IntegerType<uint32_t, spcclUint32>,
                IntegerType<int64_t, spcclInt64>, IntegerType<uint64_t, spcclUint64>,
                NarrowType<spcclFloat16>, FloatType<float, spcclFloat32>,
                FloatType<double, spcclFloat64>, NarrowType<spcclBfloat16>>();
}

TEST(SparseKernels, AllTypesAgainstScalarReference) {
  checkAllTypes<IntegerType<int8_t, spcclInt8>, IntegerType<uint8_t, spcclUint8>,
                IntegerType<int32_t, spcclInt32>, IntegerType<uint32_t, spcclUint32>,
                IntegerType<int64_t, spcclInt64>, IntegerType<uint64_t, spcclUint64>,
                NarrowType<spcclFloat16>, FloatType<float, spcclFloat32>,
                FloatType<double, spcclFloat64>, NarrowType<spcclBfloat16>>();
}

TEST(SparseKernels, SignedZeroIsZeroAndNaNIsNot) {
  const float f32[] = {-0.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(), -0.0f,
                       std::numeric_limits<float>::denorm_min()};
  EXPECT_EQ(countNonZeros(spcclFloat32, f32, 5), 2u);
  const double f64[] = {-0.0, std::nan(""), 0.0};
  EXPECT_EQ(countNonZeros(spcclFloat64, f64, 3), 1u);
  const uint16_t f16[] = {0x8000, 0x0000, 0x7e00, 0x0001, 0xfe00};  // -0, +0, NaN, tiny, -NaN
  EXPECT_EQ(countNonZeros(spcclFloat16, f16, 5), 3u);
  EXPECT_EQ(countNonZeros(spcclBfloat16, f16, 5), 3u);
  uint64_t indices[3];
  uint16_t values[3];
  ASSERT_EQ(extractNonZeros(spcclFloat16, f16, 5, indices, values, 3), 3u);
  EXPECT_EQ(indices[0], 2u);
  EXPECT_EQ(indices[1], 3u);
  EXPECT_EQ(indices[2], 4u);
  EXPECT_EQ(values[2], 0xfe00);  // extracted bit for bit
}

// The same special values inside full 64-element blocks, which take the
// vectorised mask (nonzero_mask.h) rather than the scalar tail loop.
template <typename S>
void checkSpecialsInBlocks(spcclDataType_t type, S negativeZero, S nan, S tiny, S negativeNan) {
  std::vector<S> dense(192, S{});
  const size_t at[] = {0, 31, 63, 64, 100, 127, 128, 191};
  const S pattern[] = {negativeZero, nan, tiny, negativeZero, negativeNan, tiny, nan, negativeZero};
  std::vector<uint64_t> expected;
  for (size_t k = 0; k < 8; ++k) {
    dense[at[k]] = pattern[k];
    if (k != 0 && k != 3 && k != 7) expected.push_back(at[k]);
  }
  EXPECT_EQ(countNonZeros(type, dense.data(), dense.size()), expected.size());
  std::vector<uint64_t> indices(expected.size());
  std::vector<S> values(expected.size());
  ASSERT_EQ(extractNonZeros(type, dense.data(), dense.size(), indices.data(), values.data(),
                            indices.size()),
            expected.size());
  EXPECT_EQ(indices, expected);
}

void checkSpecialValuesInFullBlocks();

TEST(SparseKernels, SpecialValuesInFullBlocks) { checkSpecialValuesInFullBlocks(); }

TEST(SparseKernels, SpecialValuesInFullBlocksBaselineScan) {
  ScopedScanMask baseline(ScanMask::Baseline);
  checkSpecialValuesInFullBlocks();
}

void checkSpecialValuesInFullBlocks() {
  constexpr float fnan = std::numeric_limits<float>::quiet_NaN();
  checkSpecialsInBlocks<float>(spcclFloat32, -0.0f, fnan, std::numeric_limits<float>::denorm_min(),
                               -fnan);
  constexpr double dnan = std::numeric_limits<double>::quiet_NaN();
  checkSpecialsInBlocks<double>(spcclFloat64, -0.0, dnan, std::numeric_limits<double>::denorm_min(),
                                -dnan);
  checkSpecialsInBlocks<uint16_t>(spcclFloat16, 0x8000, 0x7e00, 0x0001, 0xfe00);
  checkSpecialsInBlocks<uint16_t>(spcclBfloat16, 0x8000, 0x7fc0, 0x0001, 0xffc0);
  // Integers: the top bit alone is a value (not a sign to ignore).
  std::vector<int64_t> i64(128, 0);
  i64[5] = std::numeric_limits<int64_t>::min();
  i64[70] = int64_t{1} << 32;  // only the high half set
  EXPECT_EQ(countNonZeros(spcclInt64, i64.data(), i64.size()), 2u);
  std::vector<int8_t> i8(64, 0);
  i8[63] = -128;
  EXPECT_EQ(countNonZeros(spcclInt8, i8.data(), i8.size()), 1u);
}

// densify writes every element: the pairs, and zero over whatever the
// buffer held before (it is filled with 0xAB first), at both ends too;
// densifyUnordered the same from the pairs in reverse (descending) order.
TEST(SparseKernels, DensifyWritesPairsAndZerosEverywhereElse) {
  for (bool unordered : {false, true}) {
    for (size_t valueBytes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      for (std::vector<uint64_t> indices :
           {std::vector<uint64_t>{}, std::vector<uint64_t>{0}, std::vector<uint64_t>{99},
            std::vector<uint64_t>{0, 1, 2, 50, 98, 99}, std::vector<uint64_t>{3, 64, 65, 77}}) {
        const size_t count = 100;
        std::vector<unsigned char> values(indices.size() * valueBytes);
        for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<unsigned char>(i + 1);
        std::vector<unsigned char> expected(count * valueBytes, 0);
        for (size_t i = 0; i < indices.size(); ++i)
          std::memcpy(&expected[indices[i] * valueBytes], &values[i * valueBytes], valueBytes);
        std::vector<unsigned char> dense(count * valueBytes, 0xAB);
        if (unordered) {
          std::vector<uint64_t> reversed(indices.rbegin(), indices.rend());
          std::vector<unsigned char> reversedValues(values.size());
          for (size_t i = 0; i < indices.size(); ++i)
            std::memcpy(&reversedValues[i * valueBytes],
                        &values[(indices.size() - 1 - i) * valueBytes], valueBytes);
          densifyUnordered(valueBytes, reversed.data(), reversedValues.data(), reversed.size(),
                           dense.data(), count);
        } else {
          densify(valueBytes, indices.data(), values.data(), indices.size(), dense.data(), count);
        }
        EXPECT_EQ(dense, expected)
            << (unordered ? "densifyUnordered" : "densify") << ", valueBytes " << valueBytes << ", "
            << indices.size() << " pairs";
      }
    }
  }
}

TEST(SparseKernels, ScatterReduceCombinesDuplicatesInOrder) {
  // 2^24 + 1 + 1 in float: in i order each +1 rounds away; a pairwise
  // (1 + 1) first would give 2^24 + 2. Checks the promised order.
  float dense[1] = {16777216.0f};
  const uint64_t indices[] = {0, 0};
  const float values[] = {1.0f, 1.0f};
  scatterReduce(spcclFloat32, spcclSum, dense, indices, values, 2);
  EXPECT_EQ(dense[0], 16777216.0f);
  // NaN results are canonical (kernels.h).
  float nanDense[1] = {-std::numeric_limits<float>::quiet_NaN()};
  const float one[] = {1.0f};
  scatterReduce(spcclFloat32, spcclSum, nanDense, indices, one, 1);
  EXPECT_EQ(std::bit_cast<uint32_t>(nanDense[0]), 0x7fc00000u);
}

// Positions as a Packed body writes them: the first, then each gap minus
// one, as LEB128 varints.
std::vector<unsigned char> gapVarints(const std::vector<uint64_t>& positions) {
  std::vector<unsigned char> out;
  for (size_t i = 0; i < positions.size(); ++i) {
    uint64_t gap = i == 0 ? positions[0] : positions[i] - positions[i - 1] - 1;
    for (; gap >= 0x80; gap >>= 7) out.push_back(static_cast<unsigned char>(gap | 0x80));
    out.push_back(static_cast<unsigned char>(gap));
  }
  return out;
}

// mergeSum against a two-finger reference that adds common positions with
// the dense reduce kernel (lower first), for every type and value bits at
// random (NaNs, infinities and signed zeros included); mergeSumIntoDense
// writes the same union over a dirty tensor that spans several of its
// zeroing blocks, and counts the non-zeros it wrote; the gap-coded forms
// give the same with either operand read from varints.
TEST(SparseKernels, MergeSumIsTheUnionWithTheReduceKernelsSums) {
  const KernelTable& table = cpuKernels();
  std::mt19937_64 rng(7);
  const size_t count = 5000;
  for (int t = 0; t < spcclNumTypes; ++t) {
    const auto type = static_cast<spcclDataType_t>(t);
    const size_t valueBytes = spcclTypeSize(type);
    for (double density : {0.0, 0.003, 0.3, 1.0}) {
      std::vector<uint64_t> positions[2];
      std::vector<unsigned char> values[2];
      for (int side = 0; side < 2; ++side) {
        for (uint64_t i = 0; i < count; ++i)
          if (static_cast<double>(rng() % 1000) < density * 1000) positions[side].push_back(i);
        values[side].resize(positions[side].size() * valueBytes);
        for (unsigned char& byte : values[side]) byte = static_cast<unsigned char>(rng());
      }
      std::vector<uint64_t> wantPositions;
      std::vector<unsigned char> wantValues;
      size_t a = 0, b = 0;
      auto take = [&](int side, size_t i) {
        wantPositions.push_back(positions[side][i]);
        wantValues.insert(wantValues.end(), &values[side][i * valueBytes],
                          &values[side][(i + 1) * valueBytes]);
      };
      while (a < positions[0].size() || b < positions[1].size()) {
        const uint64_t pa = a < positions[0].size() ? positions[0][a] : UINT64_MAX;
        const uint64_t pb = b < positions[1].size() ? positions[1][b] : UINT64_MAX;
        if (pa < pb) {
          take(0, a++);
        } else if (pb < pa) {
          take(1, b++);
        } else {
          std::vector<unsigned char> sum(valueBytes);
          table.reduce[type][spcclSum](sum.data(), &values[0][a * valueBytes],
                                       &values[1][b * valueBytes], 1);
          wantPositions.push_back(pa);
          wantValues.insert(wantValues.end(), sum.begin(), sum.end());
          ++a;
          ++b;
        }
      }
      const SortedPairs lower{positions[0].data(), values[0].data(), positions[0].size()};
      const SortedPairs higher{positions[1].data(), values[1].data(), positions[1].size()};
      std::vector<uint64_t> gotPositions(lower.count + higher.count);
      std::vector<unsigned char> gotValues(gotPositions.size() * valueBytes);
      const size_t merged = mergeSum(type, lower, higher, gotPositions.data(), gotValues.data());
      gotPositions.resize(merged);
      gotValues.resize(merged * valueBytes);
      EXPECT_EQ(gotPositions, wantPositions) << "type " << t << ", density " << density;
      EXPECT_EQ(gotValues, wantValues) << "type " << t << ", density " << density;

      std::vector<unsigned char> wantDense(count * valueBytes, 0);
      for (size_t i = 0; i < wantPositions.size(); ++i)
        std::memcpy(&wantDense[wantPositions[i] * valueBytes], &wantValues[i * valueBytes],
                    valueBytes);
      std::vector<unsigned char> dense(count * valueBytes, 0xAB);
      const size_t nonZeros = mergeSumIntoDense(type, lower, higher, dense.data(), count);
      EXPECT_EQ(dense, wantDense) << "type " << t << ", density " << density;
      EXPECT_EQ(nonZeros, countNonZeros(type, wantValues.data(), wantPositions.size()))
          << "type " << t << ", density " << density;

      // The same with either operand read from LEB128 gap varints.
      for (int coded = 0; coded < 2; ++coded) {
        const std::vector<unsigned char> varints = gapVarints(positions[coded]);
        const GapCodedPairs gaps{varints.data(), varints.size(), values[coded].data(),
                                 positions[coded].size()};
        const SortedPairs& other = coded == 0 ? higher : lower;
        std::vector<uint64_t> codedPositions(lower.count + higher.count);
        std::vector<unsigned char> codedValues(codedPositions.size() * valueBytes);
        const size_t codedMerged = mergeSumGapCoded(type, other, gaps, coded == 0, count,
                                                    codedPositions.data(), codedValues.data());
        ASSERT_EQ(codedMerged, wantPositions.size()) << "type " << t << ", coded " << coded;
        codedPositions.resize(codedMerged);
        codedValues.resize(codedMerged * valueBytes);
        EXPECT_EQ(codedPositions, wantPositions) << "type " << t << ", coded " << coded;
        EXPECT_EQ(codedValues, wantValues) << "type " << t << ", coded " << coded;
        std::vector<unsigned char> codedDense(count * valueBytes, 0xAB);
        EXPECT_EQ(
            mergeSumGapCodedIntoDense(type, other, gaps, coded == 0, codedDense.data(), count),
            nonZeros)
            << "type " << t << ", coded " << coded;
        EXPECT_EQ(codedDense, wantDense) << "type " << t << ", coded " << coded;
      }
    }
  }
}

}  // namespace
}  // namespace spccl::kernels

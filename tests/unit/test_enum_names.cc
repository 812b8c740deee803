// The C API's names of its enumerators (spcclSparseAlgorithmName, ...):
// the strings are an interface (logs, the perf binaries' flags and JSON,
// the MPI interposer's report, spccl.SparseAlgorithm.library_name), so
// each is pinned here; anything that is no enumerator names "unknown".
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "sparse/partitioner_table.h"
#include "sparse/sparse_algorithm_table.h"
#include "spccl.h"

extern "C" {  // enum_names_as_c.c
const char* sparseAlgorithmNameOfInt(int value);
const char* sparseEncodingNameOfInt(int value);
const char* sparsePartitionerNameOfInt(int value);
const char* codecNameOfInt(int value);
const char* compressScheduleNameOfInt(int value);
}

namespace {

template <typename Enum>
Enum fromInt(int value) {
  return static_cast<Enum>(value);  // only for enumerators' values
}

// Out-of-range ints, passed from C (enum_names_as_c.c).
void expectUnknownOutside(const char* (*nameOfInt)(int), int count) {
  for (int value : {-1, count, count + 1, 1000, INT_MIN, INT_MAX})
    EXPECT_STREQ(nameOfInt(value), "unknown") << value;
}

// Every value in [0, count) has its own name.
template <typename Enum>
void expectDistinctNames(const char* (*nameOf)(Enum), int count) {
  for (int a = 0; a < count; ++a) {
    ASSERT_NE(nameOf(fromInt<Enum>(a)), nullptr);
    EXPECT_STRNE(nameOf(fromInt<Enum>(a)), "unknown") << a;
    for (int b = 0; b < a; ++b)
      EXPECT_STRNE(nameOf(fromInt<Enum>(a)), nameOf(fromInt<Enum>(b))) << a << " " << b;
  }
}

TEST(EnumNames, SparseAlgorithms) {
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseAuto), "auto");
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseBalancedParallelism), "bp");
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseHierarchical), "hc");
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseAllGather), "agsparse");
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseBlock), "block");
  EXPECT_STREQ(spcclSparseAlgorithmName(spcclSparseDense), "dense");
  expectDistinctNames(spcclSparseAlgorithmName, spcclSparseNumAlgorithms);
  expectUnknownOutside(sparseAlgorithmNameOfInt, spcclSparseNumAlgorithms);
}

TEST(EnumNames, SparseEncodings) {
  EXPECT_STREQ(spcclSparseEncodingName(spcclEncodingAuto), "auto");
  EXPECT_STREQ(spcclSparseEncodingName(spcclEncodingCoo), "coo");
  EXPECT_STREQ(spcclSparseEncodingName(spcclEncodingBitmap), "bitmap");
  EXPECT_STREQ(spcclSparseEncodingName(spcclEncodingPacked), "packed");
  EXPECT_STREQ(spcclSparseEncodingName(spcclEncodingDense), "dense");
  expectDistinctNames(spcclSparseEncodingName, spcclNumEncodings);
  expectUnknownOutside(sparseEncodingNameOfInt, spcclNumEncodings);
}

TEST(EnumNames, SparsePartitioners) {
  EXPECT_STREQ(spcclSparsePartitionerName(spcclPartitionAuto), "auto");
  EXPECT_STREQ(spcclSparsePartitionerName(spcclPartitionZenHash), "zen-hash");
  EXPECT_STREQ(spcclSparsePartitionerName(spcclPartitionPermutation), "permutation");
  EXPECT_STREQ(spcclSparsePartitionerName(spcclPartitionTwoPass), "two-pass");
  expectDistinctNames(spcclSparsePartitionerName, spcclNumPartitioners);
  expectUnknownOutside(sparsePartitionerNameOfInt, spcclNumPartitioners);
}

TEST(EnumNames, Codecs) {
  EXPECT_STREQ(spcclCodecName(spcclCodecPiecewise), "piecewise");
  EXPECT_STREQ(spcclCodecName(spcclCodecLinear), "linear");
  expectDistinctNames(spcclCodecName, spcclNumCodecs);
  expectUnknownOutside(codecNameOfInt, spcclNumCodecs);
}

TEST(EnumNames, CompressSchedules) {
  EXPECT_STREQ(spcclCompressScheduleName(spcclCompressTwoShot), "two-shot");
  EXPECT_STREQ(spcclCompressScheduleName(spcclCompressRing), "ring");
  expectDistinctNames(spcclCompressScheduleName, spcclNumCompressSchedules);
  expectUnknownOutside(compressScheduleNameOfInt, spcclNumCompressSchedules);
}

// The tables behind the names: one row per enumerator but Auto, each with
// a cost and, but for dense (the whole tensor, runDense), a schedule.
TEST(EnumNames, SparseAlgorithmTableCoversTheEnum) {
  using spccl::sparse::findSparseAlgorithm;
  using spccl::sparse::sparseAlgorithms;
  EXPECT_EQ(findSparseAlgorithm(spcclSparseAuto), nullptr);
  EXPECT_EQ(static_cast<int>(sparseAlgorithms().size()), spcclSparseNumAlgorithms - 1);
  for (int value = 1; value < spcclSparseNumAlgorithms; ++value) {
    const auto* row = findSparseAlgorithm(static_cast<spcclSparseAlgorithm_t>(value));
    ASSERT_NE(row, nullptr) << value;
    EXPECT_STREQ(row->name, spcclSparseAlgorithmName(row->id));
    EXPECT_NE(row->cost, nullptr) << row->name;
    EXPECT_EQ(row->run == nullptr, row->id == spcclSparseDense) << row->name;
  }
}

TEST(EnumNames, PartitionerTableCoversTheEnum) {
  ASSERT_EQ(static_cast<int>(spccl::sparse::sparsePartitioners().size()), spcclNumPartitioners);
  for (int value = 0; value < spcclNumPartitioners; ++value) {
    const auto id = static_cast<spcclSparsePartitioner_t>(value);
    EXPECT_EQ(spccl::sparse::sparsePartitioner(id).id, id);
  }
  // Auto means the default: what Permutation means.
  const auto& automatic = spccl::sparse::sparsePartitioner(spcclPartitionAuto);
  const auto& permutation = spccl::sparse::sparsePartitioner(spcclPartitionPermutation);
  EXPECT_EQ(automatic.partition, permutation.partition);
  EXPECT_EQ(automatic.bucketing, permutation.bucketing);
}

}  // namespace

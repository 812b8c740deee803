// The varint functions of the CUDA Packed codec (kernels/cuda/varint.h) on
// the CPU (test_cuda_logic_on_host, README.md): writing every entry's
// varint at its scanned offset gives the CPU encoder's bytes, and reading
// them back gives the gaps, for gaps of every length from 1 to 10 bytes;
// the reader rejects cut, over-long and over-64-bit varints.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cuda/varint.h"
#include "packed_inputs.h"
#include "sparse/encoding_codecs.h"

namespace spccl::gpu_test {
namespace {

namespace cuda = kernels::cuda;

TEST(CudaLogicOnHost, VarintsLikeTheCpuEncoder) {
  std::mt19937_64 rng(2);
  for (const int maxGapBits : {0, 7, 8, 20, 63}) {
    const auto positions = ascendingPositions(~uint64_t{0} - 1, 5000, maxGapBits, rng);
    const size_t nnz = positions.size();
    const size_t bytes = sparse::packedPositionBytes(positions.data(), nnz);
    std::vector<unsigned char> expected(bytes);
    const unsigned char noValues = 0;  // values of 0 bytes (memcpy wants a pointer)
    sparse::encodePacked(positions.data(), &noValues, nnz, 0, expected.data());
    // varintLengthsKernel, the exclusive scan, writeVarintsKernel:
    std::vector<unsigned char> actual(bytes, 0xcc);
    size_t at = 0;
    for (size_t i = 0; i < nnz; ++i) {
      const uint64_t gap = cuda::gapBefore(positions.data(), i);
      ASSERT_EQ(cuda::varintLength(gap), sparse::varintBytes(gap));
      cuda::writeVarint(gap, actual.data() + at);
      at += cuda::varintLength(gap);
    }
    ASSERT_EQ(at, bytes);
    ASSERT_EQ(firstDifference(expected, actual, 1), "") << "gap bits " << maxGapBits;
    at = 0;
    for (size_t i = 0; i < nnz; ++i) {  // and back
      uint64_t gap = 0;
      const size_t length = cuda::readVarint(actual.data() + at, bytes - at, &gap);
      ASSERT_EQ(length, cuda::varintLength(cuda::gapBefore(positions.data(), i)));
      ASSERT_EQ(gap, cuda::gapBefore(positions.data(), i));
      at += length;
    }
  }
}

TEST(CudaLogicOnHost, VarintReaderRejectsMalformedVarints) {
  uint64_t value = 0;
  const unsigned char cut[] = {0x81};
  EXPECT_EQ(cuda::readVarint(cut, 1, &value), 0u);
  const unsigned char over64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  EXPECT_EQ(cuda::readVarint(over64, 10, &value), 0u);
  const unsigned char max64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  EXPECT_EQ(cuda::readVarint(max64, 10, &value), 10u);
  EXPECT_EQ(value, ~uint64_t{0});
  const unsigned char eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0};
  EXPECT_EQ(cuda::readVarint(eleven, 11, &value), 0u);
}

// The cases test_gpu_packed feeds both decoders are what they say they are.
TEST(CudaLogicOnHost, PackedCasesAreJudgedAsLabelledByTheCpu) {
  for (const PackedCase& c : packedCases()) {
    const sparse::MessageBody body{c.bytes.data(), c.bytes.size(), c.nnz, kPackedCaseUniverse, 0};
    std::vector<uint64_t> positions;
    std::vector<unsigned char> values;
    EXPECT_EQ(sparse::decodePacked(body, &positions, &values) == spcclSuccess, c.wellFormed)
        << c.what;
  }
}

}  // namespace
}  // namespace spccl::gpu_test

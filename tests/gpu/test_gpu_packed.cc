// The Packed codec (kernels/cuda/packed_positions_cuda.h) against the
// CPU's (src/sparse/encoding_codecs.h): encodings byte for byte with gaps
// of every varint length (1 to 10 bytes), decoding back to the positions,
// and every malformed body the CPU decoder rejects rejected here too: a cut
// varint, a varint over 64 bits, a position beyond the universe, a varint
// too many or too few.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cuda/packed_positions_cuda.h"
#include "packed_inputs.h"
#include "sparse/encoding_codecs.h"

namespace spccl::gpu_test {
namespace {

// The CPU decoder's verdict on varint bytes alone (no values).
bool cpuAccepts(const std::vector<unsigned char>& varints, uint64_t universe, size_t nnz) {
  const sparse::MessageBody body{varints.data(), varints.size(), nnz, universe, 0};
  std::vector<uint64_t> positions;
  std::vector<unsigned char> values;
  return sparse::decodePacked(body, &positions, &values) == spcclSuccess;
}

cudaError_t gpuDecode(const std::vector<unsigned char>& varints, uint64_t universe, size_t nnz,
                      std::vector<uint64_t>* positions) {
  DeviceBuffer gpuVarints(varints.size()), gpuPositions(nnz * 8);
  if (gpuVarints.upload(varints.data(), varints.size()) != cudaSuccess) return cudaErrorUnknown;
  const cudaError_t status =
      kernels::cuda::decodePackedPositions(gpuVarints.get<unsigned char>(), varints.size(),
                                           universe, nnz, gpuPositions.get<uint64_t>(), nullptr);
  positions->resize(nnz);
  if (status == cudaSuccess) gpuPositions.download(positions->data(), nnz * 8);
  return status;
}

TEST_F(GpuTest, PackedEncodingMatchesCpuAndDecodes) {
  std::mt19937_64 rng(31);
  for (const int maxGapBits : {0, 3, 7, 14, 40, 63}) {
    for (const size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{1000}, size_t{100001}}) {
      const uint64_t universe = ~uint64_t{0} - 1;
      const auto positions = ascendingPositions(universe, count, maxGapBits, rng);
      const size_t nnz = positions.size();
      SCOPED_TRACE(testing::Message() << "gap bits " << maxGapBits << " nnz " << nnz);
      const size_t valueBytes = 4;
      std::vector<unsigned char> values(nnz * valueBytes);
      for (auto& b : values) b = static_cast<unsigned char>(rng());
      const size_t varintBytes = sparse::packedPositionBytes(positions.data(), nnz);
      std::vector<unsigned char> expected(varintBytes + values.size());
      sparse::encodePacked(positions.data(), values.data(), nnz, valueBytes, expected.data());

      DeviceBuffer gpuPositions(nnz * 8), gpuValues(values.size()), gpuOut(nnz * 14);
      SPCCL_CUDA_OK(gpuPositions.upload(positions.data(), nnz * 8));
      SPCCL_CUDA_OK(gpuValues.upload(values.data(), values.size()));
      size_t outBytes = 0;
      SPCCL_CUDA_OK(kernels::cuda::encodePacked(gpuPositions.get<uint64_t>(), gpuValues.get(), nnz,
                                                valueBytes, gpuOut.get<unsigned char>(), &outBytes,
                                                nullptr));
      ASSERT_EQ(outBytes, expected.size());
      std::vector<unsigned char> actual(outBytes);
      SPCCL_CUDA_OK(gpuOut.download(actual.data(), outBytes));
      ASSERT_EQ(firstDifference(expected, actual, 1), "");

      const std::vector<unsigned char> varints(expected.begin(), expected.begin() + varintBytes);
      std::vector<uint64_t> decoded;
      SPCCL_CUDA_OK(gpuDecode(varints, universe, nnz, &decoded));
      EXPECT_EQ(decoded, positions);
    }
  }
}

TEST_F(GpuTest, PackedDecodingRejectsWhatTheCpuRejects) {
  for (const PackedCase& c : packedCases()) {
    SCOPED_TRACE(c.what);
    const bool accepted = cpuAccepts(c.bytes, kPackedCaseUniverse, c.nnz);
    std::vector<uint64_t> decoded;
    const cudaError_t status = gpuDecode(c.bytes, kPackedCaseUniverse, c.nnz, &decoded);
    EXPECT_EQ(status == cudaSuccess, accepted) << cudaGetErrorString(status);
    if (accepted && status == cudaSuccess) {
      EXPECT_EQ(decoded, (std::vector<uint64_t>{5, 135, 136}));
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test

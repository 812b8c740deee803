// The bitmap codec (kernels/cuda/bitmap_cuda.h) against the CPU's
// (src/sparse/encoding_codecs.h): the encoding byte for byte for positions
// in any order, universes that do and do not fill their last byte, value
// sizes 1 to 8; decoding gives the positions back in ascending order, cut
// at the capacity, with the full count.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "hash_test_inputs.h"
#include "kernels/cuda/bitmap_cuda.h"
#include "sparse/encoding_codecs.h"

namespace spccl::gpu_test {
namespace {

TEST_F(GpuTest, BitmapEncodingMatchesCpuAndDecodes) {
  std::mt19937_64 rng(21);
  for (const uint64_t universe : {uint64_t{1}, uint64_t{8}, uint64_t{13}, uint64_t{1000},
                                  uint64_t{65537}, uint64_t{1} << 22}) {
    for (const double density : {0.0, 0.01, 0.5, 1.0}) {
      const size_t nnz = static_cast<size_t>(density * static_cast<double>(universe));
      const auto positions = distinctRandomIndices(universe, nnz, rng());  // random order
      for (const size_t valueBytes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
        SCOPED_TRACE(testing::Message()
                     << "universe " << universe << " nnz " << nnz << " value bytes " << valueBytes);
        std::vector<unsigned char> values(nnz * valueBytes);
        for (auto& b : values) b = static_cast<unsigned char>(rng());
        const size_t bytes = (universe + 7) / 8 + nnz * valueBytes;
        std::vector<unsigned char> expected(bytes);
        sparse::encodeBitmap(positions.data(), values.data(), nnz, universe, valueBytes,
                             expected.data());
        DeviceBuffer gpuPositions(nnz * 8), gpuValues(values.size()), gpuOut(bytes);
        SPCCL_CUDA_OK(gpuPositions.upload(positions.data(), nnz * 8));
        SPCCL_CUDA_OK(gpuValues.upload(values.data(), values.size()));
        SPCCL_CUDA_OK(cudaMemset(gpuOut.get(), 0xa5, bytes));
        SPCCL_CUDA_OK(kernels::cuda::encodeBitmap(gpuPositions.get<uint64_t>(), gpuValues.get(),
                                                  nnz, universe, valueBytes,
                                                  gpuOut.get<unsigned char>(), nullptr));
        std::vector<unsigned char> actual(bytes);
        SPCCL_CUDA_OK(gpuOut.download(actual.data(), bytes));
        ASSERT_EQ(firstDifference(expected, actual, 1), "") << "encoding";
      }
      // Decode the map: every position, then a short capacity.
      std::vector<uint64_t> sorted = positions;
      std::sort(sorted.begin(), sorted.end());
      const size_t mapBytes = (universe + 7) / 8;
      std::vector<unsigned char> map(mapBytes + 8);
      const unsigned char noValues = 0;  // values of 0 bytes (memcpy wants a pointer)
      sparse::encodeBitmap(positions.data(), &noValues, nnz, universe, 0, map.data());
      DeviceBuffer gpuMap(mapBytes), gpuDecoded((nnz + 1) * 8), gpuTotal(sizeof(size_t));
      SPCCL_CUDA_OK(gpuMap.upload(map.data(), mapBytes));
      for (const size_t capacity : {nnz, nnz / 2}) {
        SPCCL_CUDA_OK(cudaMemset(gpuDecoded.get(), 0xff, (nnz + 1) * 8));
        SPCCL_CUDA_OK(kernels::cuda::decodeBitmapPositions(gpuMap.get<unsigned char>(), universe,
                                                           gpuDecoded.get<uint64_t>(), capacity,
                                                           gpuTotal.get<size_t>(), nullptr));
        size_t total = 0;
        std::vector<uint64_t> decoded(nnz + 1);
        SPCCL_CUDA_OK(gpuTotal.download(&total, sizeof total));
        SPCCL_CUDA_OK(gpuDecoded.download(decoded.data(), decoded.size() * 8));
        EXPECT_EQ(total, nnz);
        EXPECT_EQ(decoded[capacity], ~uint64_t{0}) << "written past capacity " << capacity;
        decoded.resize(capacity);
        EXPECT_EQ(decoded, std::vector<uint64_t>(sorted.begin(), sorted.begin() + capacity));
      }
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test

// The token top-k kernels (kernels/cuda/token_topk_cuda.h) against the
// CPU's (src/compress/token_selection.h, token_rows.h): rank-order sums bit
// for bit (NaN against NaN), the same mask for every keep from 0 to beyond
// the token count on scores full of ties, +-0, infinities and NaNs, and
// row gathers/scatters at every element width the kernel picks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compress/token_rows.h"
#include "compress/token_selection.h"
#include "gpu_test_support.h"
#include "kernels/cuda/token_topk_cuda.h"
#include "token_inputs.h"

namespace spccl::gpu_test {
namespace {

TEST_F(GpuTest, TokenScoresSumInRankOrder) {
  std::mt19937_64 rng(3);
  for (const size_t tokens : {size_t{0}, size_t{1}, size_t{1000}, size_t{100003}}) {
    for (const int nranks : {1, 2, 7}) {
      std::vector<float> all(tokens * nranks);
      std::normal_distribution<float> normal(0.0f, 1e3f);
      for (auto& v : all)
        v = rng() % 50 == 0 ? std::numeric_limits<float>::quiet_NaN() : normal(rng);
      std::vector<float> expected(tokens), actual(tokens);
      compress::sumScoresInRankOrder(all.data(), nranks, tokens, expected.data());
      DeviceBuffer gpuAll(all.size() * 4), gpuOut(tokens * 4);
      SPCCL_CUDA_OK(gpuAll.upload(all.data(), all.size() * 4));
      SPCCL_CUDA_OK(kernels::cuda::sumScoresInRankOrder(gpuAll.get<float>(), nranks, tokens,
                                                        gpuOut.get<float>(), nullptr));
      SPCCL_CUDA_OK(gpuOut.download(actual.data(), tokens * 4));
      size_t mismatches = 0;
      for (size_t t = 0; t < tokens; ++t) {
        const bool bothNaN = std::isnan(expected[t]) && std::isnan(actual[t]);
        mismatches +=
            !bothNaN && std::bit_cast<uint32_t>(expected[t]) != std::bit_cast<uint32_t>(actual[t]);
      }
      EXPECT_EQ(mismatches, 0u) << tokens << " tokens, " << nranks << " ranks";
    }
  }
}

TEST_F(GpuTest, TopTokensMaskMatchesCpu) {
  std::mt19937_64 rng(4);
  for (const size_t tokens : {size_t{1}, size_t{2}, size_t{17}, size_t{1000}, size_t{65537}}) {
    const auto scores = adversarialScores(tokens, rng);
    DeviceBuffer gpuScores(tokens * 4), gpuMask(tokens);
    SPCCL_CUDA_OK(gpuScores.upload(scores.data(), tokens * 4));
    for (const size_t keep :
         {size_t{0}, size_t{1}, tokens / 3, tokens / 2, tokens - 1, tokens, tokens + 5}) {
      SCOPED_TRACE(testing::Message() << tokens << " tokens, keep " << keep);
      std::vector<unsigned char> expected(tokens), actual(tokens);
      compress::selectTopTokens(scores.data(), tokens, keep, expected.data());
      SPCCL_CUDA_OK(cudaMemset(gpuMask.get(), 0x55, tokens));
      SPCCL_CUDA_OK(kernels::cuda::selectTopTokens(gpuScores.get<float>(), tokens, keep,
                                                   gpuMask.get<unsigned char>(), nullptr));
      SPCCL_CUDA_OK(gpuMask.download(actual.data(), tokens));
      ASSERT_EQ(firstDifference(expected, actual, 1), "");
    }
  }
}

TEST_F(GpuTest, RowsGatherAndScatterLikeCpu) {
  std::mt19937_64 rng(6);
  const size_t tokens = 301;
  for (const size_t rowBytes :
       {size_t{1}, size_t{3}, size_t{4}, size_t{16}, size_t{48}, size_t{1000}}) {
    for (const size_t offset : {size_t{0}, size_t{4}, size_t{1}}) {  // 16-, 4-, 1-aligned
      SCOPED_TRACE(testing::Message() << "row " << rowBytes << " bytes, offset " << offset);
      std::vector<unsigned char> tensor(tokens * rowBytes);
      for (auto& b : tensor) b = static_cast<unsigned char>(rng());
      std::vector<size_t> rows;
      for (size_t t = 0; t < tokens; ++t)
        if (rng() % 3 == 0) rows.push_back(t);
      std::vector<unsigned char> packed(rows.size() * rowBytes);
      compress::gatherRows(tensor.data(), rows, rowBytes, packed.data());
      std::vector<unsigned char> scattered(tensor.size(), 0);
      compress::scatterRows(packed.data(), rows, rowBytes, scattered.data());

      const std::vector<uint64_t> rows64(rows.begin(), rows.end());
      DeviceBuffer gpuTensor(tensor.size() + offset), gpuRows(rows.size() * 8),
          gpuPacked(packed.size() + offset), gpuScattered(tensor.size() + offset);
      SPCCL_CUDA_OK(gpuTensor.upload(tensor.data(), tensor.size(), offset));
      SPCCL_CUDA_OK(gpuRows.upload(rows64.data(), rows64.size() * 8));
      SPCCL_CUDA_OK(cudaMemset(gpuScattered.get(), 0, tensor.size() + offset));
      SPCCL_CUDA_OK(kernels::cuda::gatherRows(gpuTensor.get<char>() + offset,
                                              gpuRows.get<uint64_t>(), rows.size(), rowBytes,
                                              gpuPacked.get<char>() + offset, nullptr));
      SPCCL_CUDA_OK(kernels::cuda::scatterRows(gpuPacked.get<char>() + offset,
                                               gpuRows.get<uint64_t>(), rows.size(), rowBytes,
                                               gpuScattered.get<char>() + offset, nullptr));
      std::vector<unsigned char> actualPacked(packed.size()), actualScattered(tensor.size());
      SPCCL_CUDA_OK(gpuPacked.download(actualPacked.data(), packed.size(), offset));
      SPCCL_CUDA_OK(gpuScattered.download(actualScattered.data(), tensor.size(), offset));
      ASSERT_EQ(firstDifference(packed, actualPacked, 1), "") << "gather";
      ASSERT_EQ(firstDifference(scattered, actualScattered, 1), "") << "scatter";
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test

// The sparse kernels of cuda_kernels.h against the CPU's (sparse_kernels.h),
// bit for bit, for every type at every test count: non-zero extraction at
// densities from none to all with exact, short and zero capacities;
// scatterReduce with repeated indices (folded in i order), with one index
// repeated throughout, and with distinct ones; densify; gatherValues.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/sparse_kernels.h"

namespace spccl::gpu_test {
namespace {

class GpuSparse : public GpuTestWithParam<spcclDataType_t> {};

std::string typeParamName(const testing::TestParamInfo<spcclDataType_t>& info) {
  return spcclTypeName(info.param);
}

std::vector<unsigned char> asBytes(const std::vector<uint64_t>& words) {
  std::vector<unsigned char> bytes(words.size() * sizeof(uint64_t));
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

TEST_P(GpuSparse, ExtractNonZerosMatchesCpu) {
  const spcclDataType_t type = GetParam();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(11 + type);
  for (const size_t count : testCounts()) {
    for (const double zeroFraction : {1.0, 0.99, 0.5, 0.0}) {
      const auto dense = randomElements(type, count, rng, zeroFraction);
      const size_t total = kernels::countNonZeros(type, dense.data(), count);
      DeviceBuffer input(dense.size()), found(sizeof(size_t));
      SPCCL_CUDA_OK(input.upload(dense.data(), dense.size()));
      SPCCL_CUDA_OK(
          kernels::cuda::countNonZeros(type, input.get(), count, found.get<size_t>(), nullptr));
      size_t counted = 0;
      SPCCL_CUDA_OK(found.download(&counted, sizeof counted));
      ASSERT_EQ(counted, total) << spcclTypeName(type) << " count " << count;

      for (const size_t capacity : {total, total / 2, size_t{0}}) {
        SCOPED_TRACE(testing::Message() << spcclTypeName(type) << " count " << count << " zeros "
                                        << zeroFraction << " capacity " << capacity);
        std::vector<uint64_t> indices(capacity);
        std::vector<unsigned char> values(capacity * bytes);
        ASSERT_EQ(kernels::extractNonZeros(type, dense.data(), count, indices.data(), values.data(),
                                           capacity),
                  total);
        // One spare slot each, poisoned: the kernel must not write past capacity.
        DeviceBuffer gpuIndices((capacity + 1) * sizeof(uint64_t)),
            gpuValues((capacity + 1) * bytes);
        SPCCL_CUDA_OK(cudaMemset(gpuIndices.get(), 0xab, (capacity + 1) * sizeof(uint64_t)));
        SPCCL_CUDA_OK(cudaMemset(gpuValues.get(), 0xab, (capacity + 1) * bytes));
        SPCCL_CUDA_OK(kernels::cuda::extractNonZeros(type, input.get(), count,
                                                     gpuIndices.get<uint64_t>(), gpuValues.get(),
                                                     capacity, found.get<size_t>(), nullptr));
        SPCCL_CUDA_OK(found.download(&counted, sizeof counted));
        ASSERT_EQ(counted, total);
        std::vector<uint64_t> actualIndices(capacity + 1);
        std::vector<unsigned char> actualValues((capacity + 1) * bytes);
        SPCCL_CUDA_OK(gpuIndices.download(actualIndices.data(), actualIndices.size() * 8));
        SPCCL_CUDA_OK(gpuValues.download(actualValues.data(), actualValues.size()));
        EXPECT_EQ(actualIndices.back(), 0xababababababababull) << "index written past capacity";
        EXPECT_EQ(actualValues.back(), 0xab) << "value written past capacity";
        actualIndices.pop_back();
        actualValues.resize(capacity * bytes);
        ASSERT_EQ(firstDifference(asBytes(indices), asBytes(actualIndices), 8), "");
        ASSERT_EQ(firstDifference(values, actualValues, bytes), "");
      }
    }
  }
}

// Indices into [0, count): random with repeats, or one index throughout.
std::vector<uint64_t> repeatedIndices(size_t count, size_t nnz, bool allSame,
                                      std::mt19937_64& rng) {
  std::vector<uint64_t> indices(nnz);
  std::uniform_int_distribution<uint64_t> pick(0, count - 1);
  const uint64_t same = count == 0 ? 0 : pick(rng);
  for (auto& index : indices) index = allSame ? same : pick(rng);
  return indices;
}

// Distinct indices in random order: a shuffled prefix of a permutation.
std::vector<uint64_t> distinctIndices(size_t count, size_t nnz, std::mt19937_64& rng) {
  std::vector<uint64_t> all(count);
  std::iota(all.begin(), all.end(), uint64_t{0});
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(nnz);
  return all;
}

void expectScatterMatches(spcclDataType_t type, spcclRedOp_t op,
                          const std::vector<unsigned char>& dense,
                          const std::vector<uint64_t>& indices,
                          const std::vector<unsigned char>& values,
                          kernels::cuda::ScatterIndices kind) {
  const size_t bytes = spcclTypeSize(type);
  std::vector<unsigned char> expected = dense;
  kernels::scatterReduce(type, op, expected.data(), indices.data(), values.data(), indices.size());
  DeviceBuffer gpuDense(dense.size()), gpuIndices(indices.size() * 8), gpuValues(values.size());
  SPCCL_CUDA_OK(gpuDense.upload(dense.data(), dense.size()));
  SPCCL_CUDA_OK(gpuIndices.upload(indices.data(), indices.size() * 8));
  SPCCL_CUDA_OK(gpuValues.upload(values.data(), values.size()));
  SPCCL_CUDA_OK(kernels::cuda::scatterReduce(type, op, gpuDense.get(), gpuIndices.get<uint64_t>(),
                                             gpuValues.get(), indices.size(), kind, nullptr));
  std::vector<unsigned char> actual(dense.size());
  SPCCL_CUDA_OK(gpuDense.download(actual.data(), actual.size()));
  ASSERT_EQ(firstDifference(expected, actual, bytes), "");
}

TEST_P(GpuSparse, ScatterReduceMatchesCpu) {
  const spcclDataType_t type = GetParam();
  std::mt19937_64 rng(23 + type);
  for (const size_t count : testCounts()) {
    if (count == 0) continue;  // no index fits
    const auto dense = randomElements(type, count, rng, 0.3);
    for (const spcclRedOp_t op : kAllOps) {
      const size_t nnz = count / 3 + 1;
      const auto values = randomElements(type, nnz, rng, 0.1);
      SCOPED_TRACE(testing::Message() << spcclTypeName(type) << " " << spcclOpName(op) << " count "
                                      << count << " nnz " << nnz);
      using kernels::cuda::ScatterIndices;
      {
        SCOPED_TRACE("repeated indices");
        expectScatterMatches(type, op, dense, repeatedIndices(count, nnz, false, rng), values,
                             ScatterIndices::MayRepeat);
      }
      {
        SCOPED_TRACE("one index throughout");
        const size_t run = std::min<size_t>(nnz, 20000);  // folded by one thread
        const std::vector<unsigned char> head(values.begin(),
                                              values.begin() + run * spcclTypeSize(type));
        expectScatterMatches(type, op, dense, repeatedIndices(count, run, true, rng), head,
                             ScatterIndices::MayRepeat);
      }
      {
        SCOPED_TRACE("distinct indices");
        const auto indices = distinctIndices(count, nnz, rng);
        expectScatterMatches(type, op, dense, indices, values, ScatterIndices::Distinct);
        expectScatterMatches(type, op, dense, indices, values, ScatterIndices::MayRepeat);
      }
    }
  }
}

TEST_P(GpuSparse, DensifyAndGatherMatchCpu) {
  const spcclDataType_t type = GetParam();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(31 + type);
  for (const size_t count : testCounts()) {
    SCOPED_TRACE(testing::Message() << spcclTypeName(type) << " count " << count);
    auto indices = distinctIndices(count, count / 4 + (count > 0), rng);
    std::sort(indices.begin(), indices.end());  // densify wants them ascending
    const auto values = randomElements(type, indices.size(), rng);
    std::vector<unsigned char> expected(count * bytes, 0xcd);
    kernels::densify(bytes, indices.data(), values.data(), indices.size(), expected.data(), count);

    DeviceBuffer gpuIndices(indices.size() * 8), gpuValues(values.size()), gpuDense(count * bytes);
    SPCCL_CUDA_OK(gpuIndices.upload(indices.data(), indices.size() * 8));
    SPCCL_CUDA_OK(gpuValues.upload(values.data(), values.size()));
    SPCCL_CUDA_OK(cudaMemset(gpuDense.get(), 0xcd, count * bytes));
    SPCCL_CUDA_OK(kernels::cuda::densify(bytes, gpuIndices.get<uint64_t>(), gpuValues.get(),
                                         indices.size(), gpuDense.get(), count, nullptr));
    std::vector<unsigned char> actual(count * bytes);
    SPCCL_CUDA_OK(gpuDense.download(actual.data(), actual.size()));
    ASSERT_EQ(firstDifference(expected, actual, bytes), "");

    // Gather from that dense tensor at random indices, repeats included.
    if (count == 0) continue;
    const auto at = repeatedIndices(count, count / 2 + 1, false, rng);
    std::vector<unsigned char> gathered(at.size() * bytes);
    kernels::gatherValues(type, expected.data(), at.data(), at.size(), gathered.data());
    DeviceBuffer gpuAt(at.size() * 8), gpuGathered(gathered.size());
    SPCCL_CUDA_OK(gpuAt.upload(at.data(), at.size() * 8));
    SPCCL_CUDA_OK(kernels::cuda::gatherValues(type, gpuDense.get(), gpuAt.get<uint64_t>(),
                                              at.size(), gpuGathered.get(), nullptr));
    std::vector<unsigned char> actualGathered(gathered.size());
    SPCCL_CUDA_OK(gpuGathered.download(actualGathered.data(), actualGathered.size()));
    ASSERT_EQ(firstDifference(gathered, actualGathered, bytes), "");
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GpuSparse, testing::ValuesIn(kAllTypes), typeParamName);

}  // namespace
}  // namespace spccl::gpu_test

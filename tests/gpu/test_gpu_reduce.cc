// cuda::reduce and cuda::divide against the CPU table (kernels/cpu), bit
// for bit: every type x op at every test count, with random and
// adversarial operands, in place (dst aliasing a), and at an odd element
// offset, which takes the kernels' unaligned path.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernels.h"

namespace spccl::gpu_test {
namespace {

using ReduceCase = std::tuple<spcclDataType_t, spcclRedOp_t>;

class GpuReduce : public GpuTestWithParam<ReduceCase> {};

// Runs the CUDA reduce on a, b placed `offset` elements into their device
// buffers, writing into a's buffer when inPlace, and returns the result.
void runReduce(spcclDataType_t type, spcclRedOp_t op, const std::vector<unsigned char>& a,
               const std::vector<unsigned char>& b, size_t offset, bool inPlace,
               std::vector<unsigned char>& result) {
  const size_t bytes = spcclTypeSize(type);
  const size_t count = a.size() / bytes;
  const size_t skip = offset * bytes;
  DeviceBuffer left(a.size() + skip), right(b.size() + skip), out(a.size() + skip);
  SPCCL_CUDA_OK(left.upload(a.data(), a.size(), skip));
  SPCCL_CUDA_OK(right.upload(b.data(), b.size(), skip));
  void* dst = (inPlace ? left.get<char>() : out.get<char>()) + skip;
  SPCCL_CUDA_OK(kernels::cuda::reduce(type, op, dst, left.get<char>() + skip,
                                      right.get<char>() + skip, count, nullptr));
  SPCCL_CUDA_OK(cudaDeviceSynchronize());
  result.resize(a.size());
  SPCCL_CUDA_OK((inPlace ? left : out).download(result.data(), result.size(), skip));
}

TEST_P(GpuReduce, MatchesCpuBitForBit) {
  const auto [type, op] = GetParam();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(1000 * type + op);
  for (const size_t count : testCounts()) {
    const auto a = randomElements(type, count, rng, 0.05);
    const auto b = randomElements(type, count, rng, 0.05);
    std::vector<unsigned char> expected(a.size());
    kernels::cpuKernels().reduce[type][op](expected.data(), a.data(), b.data(), count);
    for (const bool inPlace : {false, true}) {
      for (const size_t offset : {size_t{0}, size_t{1}}) {
        SCOPED_TRACE(testing::Message()
                     << spcclTypeName(type) << " " << spcclOpName(op) << " count " << count
                     << (inPlace ? " in place" : "") << " offset " << offset);
        std::vector<unsigned char> actual;
        runReduce(type, op, a, b, offset, inPlace, actual);
        ASSERT_EQ(firstDifference(expected, actual, bytes), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, GpuReduce,
                         testing::Combine(testing::ValuesIn(kAllTypes), testing::ValuesIn(kAllOps)),
                         [](const testing::TestParamInfo<ReduceCase>& info) {
                           return std::string(spcclTypeName(std::get<0>(info.param))) + "_" +
                                  spcclOpName(std::get<1>(info.param));
                         });

class GpuDivide : public GpuTestWithParam<spcclDataType_t> {};

TEST_P(GpuDivide, MatchesCpuBitForBit) {
  const spcclDataType_t type = GetParam();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(77 + type);
  for (const size_t count : testCounts()) {
    const auto input = randomElements(type, count, rng, 0.05);
    for (const int divisor : {1, 2, 3, -1, 7, -8, 1000}) {
      SCOPED_TRACE(testing::Message()
                   << spcclTypeName(type) << " count " << count << " divisor " << divisor);
      std::vector<unsigned char> expected = input;
      kernels::cpuKernels().divide[type](expected.data(), count, divisor);
      DeviceBuffer buffer(input.size());
      SPCCL_CUDA_OK(buffer.upload(input.data(), input.size()));
      SPCCL_CUDA_OK(kernels::cuda::divide(type, buffer.get(), count, divisor, nullptr));
      std::vector<unsigned char> actual(input.size());
      SPCCL_CUDA_OK(buffer.download(actual.data(), actual.size()));
      ASSERT_EQ(firstDifference(expected, actual, bytes), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GpuDivide, testing::ValuesIn(kAllTypes),
                         [](const testing::TestParamInfo<spcclDataType_t>& info) {
                           return std::string(spcclTypeName(info.param));
                         });

TEST_F(GpuTest, ReduceRejectsAnUnknownTypeOrOp) {
  DeviceBuffer buffer(64);
  EXPECT_EQ(kernels::cuda::reduce(spcclNumTypes, spcclSum, buffer.get(), buffer.get(), buffer.get(),
                                  4, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::cuda::reduce(spcclFloat32, spcclNumOps, buffer.get(), buffer.get(),
                                  buffer.get(), 4, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace spccl::gpu_test

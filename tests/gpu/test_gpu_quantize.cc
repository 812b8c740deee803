// The CUDA codecs against the CPU's (kernels.h, quantize_cpu.cc), byte for
// byte: both codecs, f32/f16/bf16, every width 2..8, blocks of 1, 7, 8, 256
// and 1000 elements (both quantize paths: blocks of a multiple of 8 and
// not), with and without error feedback. The inputs (codec_inputs.h) give
// every block its own scale and mix in the cases the encoding singles out:
// all-zero blocks, blocks holding inf or NaN, subnormal scales, and values
// on the midpoints between levels (rounding ties).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "codec_inputs.h"
#include "gpu_test_support.h"
#include "kernels/cpu/half_float.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernels.h"

namespace spccl::gpu_test {
namespace {

using kernels::Codec;
using kernels::QuantizerSpec;

// The element counts for one spec: all of them at the common spec, the
// small ones elsewhere (the CPU reference is the slow side).
bool worthTesting(size_t count, int bits, size_t blockSize) {
  return count <= (size_t{1} << 20) || (bits == 4 && blockSize == 256);
}

using CodecCase = std::tuple<Codec, spcclDataType_t>;
class GpuCodec : public GpuTestWithParam<CodecCase> {};

TEST_P(GpuCodec, QuantizeMatchesCpuByteForByte) {
  const auto [codec, type] = GetParam();
  const kernels::KernelTable& cpu = kernels::cpuKernels();
  std::mt19937_64 rng(static_cast<uint64_t>(codec) * 100 + type);
  for (int bits = kernels::kMinQuantizerBits; bits <= kernels::kMaxQuantizerBits; ++bits) {
    for (const size_t blockSize : {size_t{1}, size_t{7}, size_t{8}, size_t{256}, size_t{1000}}) {
      const QuantizerSpec spec{codec, bits, blockSize};
      for (const size_t count : testCounts()) {
        if (!worthTesting(count, bits, blockSize)) continue;
        const auto input = codecInput(type, count, blockSize, bits, rng);
        const size_t encodedBytes = kernels::quantizedBytes(spec, count);
        DeviceBuffer gpuInput(input.size()), gpuEncoded(encodedBytes), gpuResidual(count * 4);
        SPCCL_CUDA_OK(gpuInput.upload(input.data(), input.size()));
        for (const bool feedback : {false, true}) {
          SCOPED_TRACE(testing::Message() << spcclTypeName(type) << " codec " << int(codec)
                                          << " bits " << bits << " block " << blockSize << " count "
                                          << count << (feedback ? " with residual" : ""));
          std::vector<float> residual = smallFloats(feedback ? count : 0, rng);
          SPCCL_CUDA_OK(gpuResidual.upload(residual.data(), residual.size() * 4));
          std::vector<unsigned char> expected(encodedBytes);
          cpu.quantize[type](spec, input.data(), count, expected.data(),
                             feedback ? residual.data() : nullptr);
          SPCCL_CUDA_OK(kernels::cuda::quantize(
              type, spec, gpuInput.get(), count, gpuEncoded.get<unsigned char>(),
              feedback ? gpuResidual.get<float>() : nullptr, nullptr));
          std::vector<unsigned char> actual(encodedBytes);
          SPCCL_CUDA_OK(gpuEncoded.download(actual.data(), actual.size()));
          ASSERT_EQ(firstDifference(expected, actual, 1), "") << "encoding";
          if (!feedback) continue;
          std::vector<float> actualResidual(count);
          SPCCL_CUDA_OK(gpuResidual.download(actualResidual.data(), count * 4));
          ASSERT_EQ(firstDifference(bytesOf(residual), bytesOf(actualResidual), 4), "")
              << "residual";
        }
      }
    }
  }
}

TEST_P(GpuCodec, DequantizeMatchesCpu) {
  const auto [codec, type] = GetParam();
  const kernels::KernelTable& cpu = kernels::cpuKernels();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(static_cast<uint64_t>(codec) * 100 + type + 7);
  for (int bits = kernels::kMinQuantizerBits; bits <= kernels::kMaxQuantizerBits; ++bits) {
    for (const size_t blockSize : {size_t{1}, size_t{7}, size_t{8}, size_t{256}, size_t{1000}}) {
      const QuantizerSpec spec{codec, bits, blockSize};
      for (const size_t count : testCounts()) {
        if (!worthTesting(count, bits, blockSize)) continue;
        SCOPED_TRACE(testing::Message()
                     << spcclTypeName(type) << " codec " << int(codec) << " bits " << bits
                     << " block " << blockSize << " count " << count);
        // An encoding made by the CPU, so that decoding is tested on its own.
        const auto input = codecInput(type, count, blockSize, bits, rng);
        std::vector<unsigned char> encoded(kernels::quantizedBytes(spec, count));
        cpu.quantize[type](spec, input.data(), count, encoded.data(), nullptr);
        DeviceBuffer gpuEncoded(encoded.size()), gpuOut(count * bytes), gpuAcc(count * 4);
        SPCCL_CUDA_OK(gpuEncoded.upload(encoded.data(), encoded.size()));

        std::vector<unsigned char> expected(count * bytes);
        cpu.dequantize[type](spec, encoded.data(), count, expected.data());
        SPCCL_CUDA_OK(kernels::cuda::dequantize(type, spec, gpuEncoded.get<unsigned char>(), count,
                                                gpuOut.get(), nullptr));
        std::vector<unsigned char> actual(count * bytes);
        SPCCL_CUDA_OK(gpuOut.download(actual.data(), actual.size()));
        ASSERT_EQ(firstDifference(expected, actual, bytes), "") << "dequantize";

        // Decoded NaNs are canonical on both sides and the sums finite or
        // NaN from them: bit for bit here too.
        std::vector<float> acc = smallFloats(count, rng);
        SPCCL_CUDA_OK(gpuAcc.upload(acc.data(), count * 4));
        cpu.dequantizeAdd(spec, encoded.data(), count, acc.data());
        SPCCL_CUDA_OK(kernels::cuda::dequantizeAdd(spec, gpuEncoded.get<unsigned char>(), count,
                                                   gpuAcc.get<float>(), nullptr));
        std::vector<float> actualAcc(count);
        SPCCL_CUDA_OK(gpuAcc.download(actualAcc.data(), count * 4));
        ASSERT_EQ(firstDifference(bytesOf(acc), bytesOf(actualAcc), 4), "") << "dequantizeAdd";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    BothCodecsAllFloatTypes, GpuCodec,
    testing::Combine(testing::Values(Codec::Piecewise, Codec::Linear),
                     testing::Values(spcclFloat32, spcclFloat16, spcclBfloat16)),
    [](const testing::TestParamInfo<CodecCase>& info) {
      return std::string(std::get<0>(info.param) == Codec::Linear ? "linear_" : "piecewise_") +
             spcclTypeName(std::get<1>(info.param));
    });

// widenAdd's NaN sums may differ in payload (cuda_kernels.h): compared bit
// for bit elsewhere, as NaN against NaN there.
class GpuWidenAdd : public GpuTestWithParam<spcclDataType_t> {};

TEST_P(GpuWidenAdd, MatchesCpu) {
  const spcclDataType_t type = GetParam();
  std::mt19937_64 rng(300 + type);
  for (const size_t count : testCounts()) {
    SCOPED_TRACE(testing::Message() << spcclTypeName(type) << " count " << count);
    const auto input = randomElements(type, count, rng, 0.1);
    std::vector<float> acc = smallFloats(count, rng);
    DeviceBuffer gpuInput(input.size()), gpuAcc(count * 4);
    SPCCL_CUDA_OK(gpuInput.upload(input.data(), input.size()));
    SPCCL_CUDA_OK(gpuAcc.upload(acc.data(), count * 4));
    kernels::cpuKernels().widenAdd[type](acc.data(), input.data(), count);
    SPCCL_CUDA_OK(
        kernels::cuda::widenAdd(type, gpuAcc.get<float>(), gpuInput.get(), count, nullptr));
    std::vector<float> actual(count);
    SPCCL_CUDA_OK(gpuAcc.download(actual.data(), count * 4));
    size_t mismatches = 0;
    for (size_t i = 0; i < count; ++i) {
      const bool bothNaN = std::isnan(acc[i]) && std::isnan(actual[i]);
      if (!bothNaN && std::bit_cast<uint32_t>(acc[i]) != std::bit_cast<uint32_t>(actual[i]))
        ++mismatches;
    }
    ASSERT_EQ(mismatches, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, GpuWidenAdd,
                         testing::Values(spcclFloat32, spcclFloat16, spcclBfloat16),
                         [](const testing::TestParamInfo<spcclDataType_t>& info) {
                           return std::string(spcclTypeName(info.param));
                         });

TEST_F(GpuTest, CodecsRejectBadSpecsAndTypes) {
  DeviceBuffer buffer(1024);
  const QuantizerSpec good{Codec::Piecewise, 4, 256};
  const QuantizerSpec tooWide{Codec::Piecewise, 9, 256};
  const QuantizerSpec noBlock{Codec::Linear, 4, 0};
  auto* bytes = buffer.get<unsigned char>();
  EXPECT_EQ(kernels::cuda::quantize(spcclInt32, good, buffer.get(), 8, bytes, nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(
      kernels::cuda::quantize(spcclFloat32, tooWide, buffer.get(), 8, bytes, nullptr, nullptr),
      cudaErrorInvalidValue);
  EXPECT_EQ(kernels::cuda::dequantize(spcclFloat32, noBlock, bytes, 8, buffer.get(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::cuda::widenAdd(spcclFloat64, buffer.get<float>(), bytes, 8, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace spccl::gpu_test

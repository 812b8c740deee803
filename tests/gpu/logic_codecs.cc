// The per-thread work of the CUDA codecs (kernels/cuda/quantize_groups.h)
// on the CPU (test_cuda_logic_on_host, README.md): a warp's lanes computing
// a block's scale (strided accumulation, butterfly merge), one call per
// 8-code group in the order of either quantize path (block by block when
// blocks are multiples of 8, else all scales first), and the decoder one
// element per call; the result must be the CPU codec's, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "codec_inputs.h"
#include "gpu_test_support.h"
#include "kernels/cuda/quantize_groups.h"
#include "kernels/kernels.h"

namespace spccl::gpu_test {
namespace {

using kernels::Codec;
using kernels::QuantizerSpec;
namespace cuda = kernels::cuda;

constexpr unsigned kLanes = 32;

// blockScalesKernel for one block: lane l adds elements begin + l, + 32, ...;
// then for offset 16, 8, 4, 2, 1 every lane merges lane (l ^ offset)'s state
// as it was before the step (__shfl_xor_sync exchanges simultaneously).
template <typename Format>
float warpBlockScale(const typename Format::Storage* in, const float* residual, size_t begin,
                     size_t end) {
  std::array<cuda::ScaleAccumulator, kLanes> lanes{};
  for (unsigned l = 0; l < kLanes; ++l)
    for (size_t i = begin + l; i < end; i += kLanes)
      lanes[l].add(kernels::encodedValue<Format>(in, residual, i));
  for (unsigned offset = kLanes / 2; offset > 0; offset /= 2) {
    const auto before = lanes;
    for (unsigned l = 0; l < kLanes; ++l)
      lanes[l].merge(before[l ^ offset].m, before[l ^ offset].nonFinite);
  }
  return lanes[0].scale();
}

// kernels/cuda/quantize_cuda.cu's quantize, its grids unrolled into loops:
// quantizeBlocksKernel when blocks hold a multiple of 8 elements, else
// blockScalesKernel then quantizeCodesKernel.
template <typename Format, typename Magnitude>
void quantizeLikeTheKernels(const Magnitude& magnitude, const QuantizerSpec& spec,
                            const void* input, size_t count, unsigned char* out, float* residual) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  const size_t blocks = kernels::quantizedBlockCount(spec, count);
  const cuda::LevelTable levels = cuda::levelTableOf(magnitude, spec.bits);
  unsigned char* packed = out + blocks * sizeof(float);
  if (spec.blockSize % cuda::kCodeGroup == 0) {  // quantizeBlocksKernel: block by block
    const size_t groups = cuda::codeGroups(count), groupsPerBlock = spec.blockSize / 8;
    for (size_t b = 0; b < blocks; ++b) {
      const float m = warpBlockScale<Format>(in, residual, b * spec.blockSize,
                                             std::min(count, (b + 1) * spec.blockSize));
      std::memcpy(out + b * sizeof(float), &m, sizeof(float));
      for (size_t g = b * groupsPerBlock; g < std::min(groups, (b + 1) * groupsPerBlock); ++g)
        cuda::quantizeGroup<Format>(magnitude, levels, spec.bits, spec.blockSize, in, residual,
                                    count, out, packed, g);
    }
    return;
  }
  for (size_t b = 0; b < blocks; ++b) {  // blockScalesKernel, then quantizeCodesKernel
    const float m = warpBlockScale<Format>(in, residual, b * spec.blockSize,
                                           std::min(count, (b + 1) * spec.blockSize));
    std::memcpy(out + b * sizeof(float), &m, sizeof(float));
  }
  for (size_t g = 0; g < cuda::codeGroups(count); ++g)
    cuda::quantizeGroup<Format>(magnitude, levels, spec.bits, spec.blockSize, in, residual, count,
                                out, packed, g);
}

template <typename Magnitude, typename Sink>
void decodeLikeTheKernels(const Magnitude& magnitude, const QuantizerSpec& spec,
                          const unsigned char* encoded, size_t count, const Sink& sink) {
  const cuda::LevelTable levels = cuda::levelTableOf(magnitude, spec.bits);
  const unsigned char* packed = encoded + kernels::quantizedBlockCount(spec, count) * sizeof(float);
  for (size_t i = count; i-- > 0;)  // any order: elements are independent
    cuda::decodeElementAt(levels, spec.bits, spec.blockSize, encoded, packed, i, sink);
}

template <typename Format>
void checkCodec(Codec codec, spcclDataType_t type) {
  const kernels::KernelTable& cpu = kernels::cpuKernels();
  const size_t bytes = spcclTypeSize(type);
  std::mt19937_64 rng(static_cast<uint64_t>(codec) * 10 + type);
  for (int bits = kernels::kMinQuantizerBits; bits <= kernels::kMaxQuantizerBits; ++bits) {
    const int n = bits - 1;
    const kernels::PiecewiseMagnitude piecewise(n);
    const kernels::LinearMagnitude linear(n);
    for (const size_t blockSize :
         {size_t{1}, size_t{7}, size_t{8}, size_t{33}, size_t{256}, size_t{1000}}) {
      const QuantizerSpec spec{codec, bits, blockSize};
      for (const size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{255},
                                 size_t{257}, size_t{4097}, size_t{20001}}) {
        SCOPED_TRACE(testing::Message()
                     << spcclTypeName(type) << " codec " << int(codec) << " bits " << bits
                     << " block " << blockSize << " count " << count);
        const auto input = codecInput(type, count, blockSize, bits, rng);
        const size_t encodedBytes = kernels::quantizedBytes(spec, count);
        for (const bool feedback : {false, true}) {
          std::vector<float> residual = smallFloats(feedback ? count : 0, rng);
          std::vector<float> hostResidual = residual;
          std::vector<unsigned char> expected(encodedBytes), actual(encodedBytes, 0xee);
          cpu.quantize[type](spec, input.data(), count, expected.data(),
                             feedback ? residual.data() : nullptr);
          float* r = feedback ? hostResidual.data() : nullptr;
          if (codec == Codec::Linear)
            quantizeLikeTheKernels<Format>(linear, spec, input.data(), count, actual.data(), r);
          else
            quantizeLikeTheKernels<Format>(piecewise, spec, input.data(), count, actual.data(), r);
          ASSERT_EQ(firstDifference(expected, actual, 1), "") << "encoding";
          ASSERT_EQ(firstDifference(bytesOf(residual), bytesOf(hostResidual), 4), "") << "residual";
        }
        std::vector<unsigned char> encoded(encodedBytes);
        cpu.quantize[type](spec, input.data(), count, encoded.data(), nullptr);
        std::vector<unsigned char> expected(count * bytes), actual(count * bytes, 0xee);
        cpu.dequantize[type](spec, encoded.data(), count, expected.data());
        const cuda::StoreDecoded<Format> store{
            reinterpret_cast<typename Format::Storage*>(actual.data())};
        std::vector<float> expectedAcc = smallFloats(count, rng);
        std::vector<float> actualAcc = expectedAcc;
        cpu.dequantizeAdd(spec, encoded.data(), count, expectedAcc.data());
        const cuda::AddDecoded add{actualAcc.data()};
        if (codec == Codec::Linear) {
          decodeLikeTheKernels(linear, spec, encoded.data(), count, store);
          decodeLikeTheKernels(linear, spec, encoded.data(), count, add);
        } else {
          decodeLikeTheKernels(piecewise, spec, encoded.data(), count, store);
          decodeLikeTheKernels(piecewise, spec, encoded.data(), count, add);
        }
        ASSERT_EQ(firstDifference(expected, actual, bytes), "") << "dequantize";
        ASSERT_EQ(firstDifference(bytesOf(expectedAcc), bytesOf(actualAcc), 4), "")
            << "dequantizeAdd";
      }
    }
  }
}

TEST(CudaLogicOnHost, CodecGroupsMatchTheCpuCodec) {
  for (const Codec codec : {Codec::Piecewise, Codec::Linear}) {
    checkCodec<kernels::NativeFormat<float>>(codec, spcclFloat32);
    checkCodec<kernels::HalfFormat>(codec, spcclFloat16);
    checkCodec<kernels::Bfloat16Format>(codec, spcclBfloat16);
  }
}

}  // namespace
}  // namespace spccl::gpu_test

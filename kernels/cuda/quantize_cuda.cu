// The codecs of kernels.h on the GPU: per-block scales, the magnitude
// quantizers of quantizer_levels.h and the per-element steps of
// quantize_element.h (the same source as the CPU's quantize_cpu.cc), and
// LSB-first bit packing (bit_packing.h), byte for byte the CPU encoding.
//
// quantize is two kernels: one warp per quantizer block finds its scale
// m = max|v| (NaN when the block holds inf or NaN); then one thread per
// group of 8 elements computes their codes (and residuals) and writes the
// group's `bits` packed bytes. Eight codes fill exactly `bits` bytes, so
// groups never share a byte and need no atomics. Decoding is one thread
// per group too. The per-thread work is quantize_groups.h's, which
// tests/gpu also runs on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/compress/quantize_element.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/quantize_groups.h"

namespace spccl::kernels::cuda {
namespace {

constexpr unsigned kWarp = 32;

// One warp per quantizer block: each lane accumulates its strided elements,
// the lanes merge by shuffles.
template <typename Format>
__global__ void blockScalesKernel(const typename Format::Storage* in, const float* residual,
                                  size_t count, size_t blockSize, size_t blocks,
                                  unsigned char* out) {
  const unsigned lane = threadIdx.x % kWarp;
  const size_t warps = itemStride() / kWarp;
  for (size_t b = firstItem() / kWarp; b < blocks; b += warps) {  // uniform across the warp
    const size_t begin = b * blockSize;
    const size_t end = min(count, begin + blockSize);
    ScaleAccumulator scale;
    for (size_t i = begin + lane; i < end; i += kWarp)
      scale.add(encodedValue<Format>(in, residual, i));
    for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
      scale.merge(__shfl_xor_sync(0xffffffffu, scale.m, offset),
                  __shfl_xor_sync(0xffffffffu, static_cast<int>(scale.nonFinite), offset) != 0);
    }
    if (lane == 0) {
      const float m = scale.scale();
      memcpy(out + b * sizeof(float), &m, sizeof(float));
    }
  }
}

// The levels are a kernel argument (1 KiB) read in place: __grid_constant__,
// so indexing them needs no per-thread copy.
template <typename Format, typename Magnitude>
__global__ void quantizeCodesKernel(Magnitude magnitude, const __grid_constant__ LevelTable levels,
                                    int bits, size_t blockSize, const typename Format::Storage* in,
                                    float* residual, size_t count, unsigned char* out,
                                    unsigned char* packed) {
  const size_t groups = codeGroups(count);
  for (size_t g = firstItem(); g < groups; g += itemStride())
    quantizeGroup<Format>(magnitude, levels, bits, blockSize, in, residual, count, out, packed, g);
}

template <typename Sink>
__global__ void decodeKernel(const __grid_constant__ LevelTable levels, int bits, size_t blockSize,
                             size_t blocks, const unsigned char* in, size_t count, Sink sink) {
  const unsigned char* packed = in + blocks * sizeof(float);
  const size_t groups = codeGroups(count);
  for (size_t g = firstItem(); g < groups; g += itemStride())
    decodeGroup(levels, bits, blockSize, in, packed, count, g, sink);
}

template <typename Format>
__global__ void widenAddKernel(float* acc, const typename Format::Storage* in, size_t count) {
  for (size_t i = firstItem(); i < count; i += itemStride())
    acc[i] = canonicaliseNaN(acc[i] + Format::load(in[i]));
}

bool validSpec(const QuantizerSpec& spec) {
  return spec.bits >= kMinQuantizerBits && spec.bits <= kMaxQuantizerBits && spec.blockSize >= 1;
}

// fn(Format{}) for the three codec types.
template <typename Fn>
cudaError_t withCodecFormat(spcclDataType_t type, Fn&& fn) {
  switch (type) {
    case spcclFloat32:
      return fn(NativeFormat<float>{});
    case spcclFloat16:
      return fn(HalfFormat{});
    case spcclBfloat16:
      return fn(Bfloat16Format{});
    default:
      return cudaErrorInvalidValue;
  }
}

// fn(magnitude) with the spec's magnitude quantizer.
template <typename Fn>
cudaError_t withMagnitude(const QuantizerSpec& spec, Fn&& fn) {
  const int n = spec.bits - 1;
  if (spec.codec == Codec::Linear) return fn(LinearMagnitude(n));
  return fn(PiecewiseMagnitude(n));
}

template <typename Sink>
cudaError_t launchDecode(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                         Sink sink, cudaStream_t stream) {
  return withMagnitude(spec, [&](auto magnitude) {
    decodeKernel<<<blocksFor(codeGroups(count)), kThreadsPerBlock, 0, stream>>>(
        levelTableOf(magnitude, spec.bits), spec.bits, spec.blockSize,
        quantizedBlockCount(spec, count), in, count, sink);
    return launchError();
  });
}

}  // namespace

cudaError_t quantize(spcclDataType_t type, const QuantizerSpec& spec, const void* in, size_t count,
                     unsigned char* out, float* residual, cudaStream_t stream) {
  if (!validSpec(spec)) return cudaErrorInvalidValue;
  return withCodecFormat(type, [&](auto format) {
    using Format = decltype(format);
    using Storage = typename Format::Storage;
    if (count == 0) return cudaSuccess;
    const auto* values = static_cast<const Storage*>(in);
    const size_t blocks = quantizedBlockCount(spec, count);
    blockScalesKernel<Format><<<blocksFor(blocks * kWarp), kThreadsPerBlock, 0, stream>>>(
        values, residual, count, spec.blockSize, blocks, out);
    const cudaError_t status = launchError();
    if (status != cudaSuccess) return status;
    return withMagnitude(spec, [&](auto magnitude) {
      quantizeCodesKernel<Format><<<blocksFor(codeGroups(count)), kThreadsPerBlock, 0, stream>>>(
          magnitude, levelTableOf(magnitude, spec.bits), spec.bits, spec.blockSize, values,
          residual, count, out, out + blocks * sizeof(float));
      return launchError();
    });
  });
}

cudaError_t dequantize(spcclDataType_t type, const QuantizerSpec& spec, const unsigned char* in,
                       size_t count, void* out, cudaStream_t stream) {
  if (!validSpec(spec)) return cudaErrorInvalidValue;
  return withCodecFormat(type, [&](auto format) {
    using Format = decltype(format);
    if (count == 0) return cudaSuccess;
    const StoreDecoded<Format> sink{static_cast<typename Format::Storage*>(out)};
    return launchDecode(spec, in, count, sink, stream);
  });
}

cudaError_t dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                          float* acc, cudaStream_t stream) {
  if (!validSpec(spec)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  return launchDecode(spec, in, count, AddDecoded{acc}, stream);
}

cudaError_t widenAdd(spcclDataType_t type, float* acc, const void* in, size_t count,
                     cudaStream_t stream) {
  return withCodecFormat(type, [&](auto format) {
    using Format = decltype(format);
    if (count == 0) return cudaSuccess;
    widenAddKernel<Format><<<blocksFor(count), kThreadsPerBlock, 0, stream>>>(
        acc, static_cast<const typename Format::Storage*>(in), count);
    return launchError();
  });
}

}  // namespace spccl::kernels::cuda

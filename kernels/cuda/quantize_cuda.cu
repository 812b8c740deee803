// The codecs of kernels.h on the GPU: per-block scales, the magnitude
// quantizers of quantizer_levels.h and the per-element steps of
// quantize_element.h (the per-element formulas of the CPU reference codec;
// the CPU's fast codecs are byte-identical to it), and
// LSB-first bit packing (bit_packing.h), byte for byte the CPU encoding.
//
// quantize finds each block's scale m = max|v| (NaN when the block holds
// inf or NaN) with one warp per block, and the codes (and residuals) one
// group of 8 elements per thread, each group writing its `bits` packed
// bytes. Eight codes fill exactly `bits` bytes, so groups never share a
// byte and need no atomics. With blocks of a multiple of 8 elements (the
// default 256) one kernel does both, block by block, reading the input
// from DRAM once; otherwise a group may span two blocks, and the scales
// are a kernel of their own before the codes. Decoding is one thread per
// element (a code spans at most two bytes), so the stores coalesce. The
// per-thread work is quantize_groups.h's, which tests/gpu also runs on the
// host.
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

// The scale of elements [begin, end), computed by a whole warp: each lane
// accumulates its strided elements, the lanes merge by shuffles; every
// lane gets the result.
template <typename Format>
__device__ float warpBlockScale(const typename Format::Storage* in, const float* residual,
                                size_t begin, size_t end, unsigned lane) {
  ScaleAccumulator scale;
  for (size_t i = begin + lane; i < end; i += kWarp)
    scale.add(encodedValue<Format>(in, residual, i));
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
    scale.merge(__shfl_xor_sync(0xffffffffu, scale.m, offset),
                __shfl_xor_sync(0xffffffffu, static_cast<int>(scale.nonFinite), offset) != 0);
  }
  return scale.scale();
}

// One warp per quantizer block (the loop is uniform across the warp).
template <typename Format>
__global__ void blockScalesKernel(const typename Format::Storage* in, const float* residual,
                                  size_t count, size_t blockSize, size_t blocks,
                                  unsigned char* out) {
  const unsigned lane = threadIdx.x % kWarp;
  const size_t warps = itemStride() / kWarp;
  for (size_t b = firstItem() / kWarp; b < blocks; b += warps) {
    const float m =
        warpBlockScale<Format>(in, residual, b * blockSize, min(count, (b + 1) * blockSize), lane);
    if (lane == 0) memcpy(out + b * sizeof(float), &m, sizeof(float));
  }
}

// When blockSize is a multiple of 8, no code group straddles two blocks,
// and one warp does a block from start to end: its scale, then its groups.
// The second pass re-reads what the first just read, from cache, so the
// input crosses DRAM once instead of twice. __syncwarp orders lane 0's
// store of the scale before the other lanes' reads of it.
template <typename Format, typename Magnitude>
__global__ void quantizeBlocksKernel(Magnitude magnitude, const __grid_constant__ LevelTable levels,
                                     int bits, size_t blockSize, const typename Format::Storage* in,
                                     float* residual, size_t count, size_t blocks,
                                     unsigned char* out, unsigned char* packed) {
  const unsigned lane = threadIdx.x % kWarp;
  const size_t warps = itemStride() / kWarp;
  const size_t groups = codeGroups(count), groupsPerBlock = blockSize / kCodeGroup;
  for (size_t b = firstItem() / kWarp; b < blocks; b += warps) {
    const float m =
        warpBlockScale<Format>(in, residual, b * blockSize, min(count, (b + 1) * blockSize), lane);
    if (lane == 0) memcpy(out + b * sizeof(float), &m, sizeof(float));
    __syncwarp();
    const size_t end = min(groups, (b + 1) * groupsPerBlock);
    for (size_t g = b * groupsPerBlock + lane; g < end; g += kWarp)
      quantizeGroup<Format>(magnitude, levels, bits, blockSize, in, residual, count, out, packed,
                            g);
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
  for (size_t i = firstItem(); i < count; i += itemStride())
    decodeElementAt(levels, bits, blockSize, in, packed, i, sink);
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
    decodeKernel<<<blocksFor(count), kThreadsPerBlock, 0, stream>>>(
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
    unsigned char* packed = out + blocks * sizeof(float);
    if (spec.blockSize % kCodeGroup == 0) {
      return withMagnitude(spec, [&](auto magnitude) {
        quantizeBlocksKernel<Format><<<blocksFor(blocks * kWarp), kThreadsPerBlock, 0, stream>>>(
            magnitude, levelTableOf(magnitude, spec.bits), spec.bits, spec.blockSize, values,
            residual, count, blocks, out, packed);
        return launchError();
      });
    }
    blockScalesKernel<Format><<<blocksFor(blocks * kWarp), kThreadsPerBlock, 0, stream>>>(
        values, residual, count, spec.blockSize, blocks, out);
    const cudaError_t status = launchError();
    if (status != cudaSuccess) return status;
    return withMagnitude(spec, [&](auto magnitude) {
      quantizeCodesKernel<Format><<<blocksFor(codeGroups(count)), kThreadsPerBlock, 0, stream>>>(
          magnitude, levelTableOf(magnitude, spec.bits), spec.bits, spec.blockSize, values,
          residual, count, out, packed);
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

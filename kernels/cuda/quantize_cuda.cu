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
// per group too.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/quantize_element.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.cuh"

namespace spccl::kernels::cuda {
namespace {

constexpr unsigned kWarp = 32;
constexpr size_t kGroup = 8;  // codes per packed group of `bits` bytes

// signedLevels() of the spec, a kernel argument (1 KiB) read in place
// (__grid_constant__, so indexing it needs no per-thread copy).
struct LevelTable {
  float level[256];
};

template <typename Magnitude>
LevelTable levelTableOf(const Magnitude& magnitude, int bits) {
  const std::array<float, 256> levels = signedLevels(magnitude, bits);
  LevelTable table;
  std::copy(levels.begin(), levels.end(), table.level);
  return table;
}

// Scales are f32 at the start of the encoding, at any alignment.
__device__ float scaleAt(const unsigned char* encoded, size_t block) {
  float m;
  memcpy(&m, encoded + block * sizeof(float), sizeof(float));
  return m;
}

// The CPU's blockScale (quantize_cpu.cc) split over a warp: each lane keeps
// the CPU's running max and non-finite flag over its strided elements,
// and the lanes' maxima combine exactly (max is order-independent over the
// finite magnitudes it sees; NaN never enters it).
template <typename Format>
__global__ void blockScalesKernel(const typename Format::Storage* in, const float* residual,
                                  size_t count, size_t blockSize, size_t blocks,
                                  unsigned char* out) {
  const unsigned lane = threadIdx.x % kWarp;
  const size_t warps = itemStride() / kWarp;
  for (size_t b = firstItem() / kWarp; b < blocks; b += warps) {  // uniform across the warp
    const size_t begin = b * blockSize;
    const size_t end = min(count, begin + blockSize);
    float m = 0;
    bool nonFinite = false;
    for (size_t i = begin + lane; i < end; i += kWarp) {
      const float a = fabsf(encodedValue<Format>(in, residual, i));
      m = a > m ? a : m;
      nonFinite |= !(a <= FLT_MAX);
    }
    for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, m, offset);
      m = other > m ? other : m;
    }
    nonFinite = __any_sync(0xffffffffu, nonFinite);
    if (lane == 0) {
      const float scale = nonFinite ? canonicalNaN<float>() : m;
      memcpy(out + b * sizeof(float), &scale, sizeof(float));
    }
  }
}

// The packed bytes of group g (n codes): little-endian, as the CPU's
// memcpy of a 64-bit word on x86-64.
__device__ void storeGroup(unsigned char* packed, size_t g, int bits, size_t n, uint64_t word) {
  unsigned char* at = packed + g * bits;
  const size_t bytes = (n * bits + 7) / 8;
  for (size_t k = 0; k < bytes; ++k) at[k] = static_cast<unsigned char>(word >> (8 * k));
}

__device__ uint64_t loadGroup(const unsigned char* packed, size_t g, int bits, size_t n) {
  const unsigned char* at = packed + g * bits;
  const size_t bytes = (n * bits + 7) / 8;
  uint64_t word = 0;
  for (size_t k = 0; k < bytes; ++k) word |= static_cast<uint64_t>(at[k]) << (8 * k);
  return word;
}

// quantizePiece (quantize_cpu.cc), a group of 8 elements per thread; the
// scales are already in out. The normaliser (one division) is rebuilt only
// when the group crosses into another block.
template <typename Format, typename Magnitude>
__global__ void quantizeCodesKernel(Magnitude magnitude, const __grid_constant__ LevelTable levels,
                                    int bits, size_t blockSize, const typename Format::Storage* in,
                                    float* residual, size_t count, unsigned char* out,
                                    unsigned char* packed) {
  const size_t groups = (count + kGroup - 1) / kGroup;
  for (size_t g = firstItem(); g < groups; g += itemStride()) {
    const size_t begin = g * kGroup;
    const size_t n = min(kGroup, count - begin);
    uint8_t codes[kGroup] = {};
    size_t block = begin / blockSize;
    float m = scaleAt(out, block);
    BlockNormaliser normalise(m);
    for (size_t j = 0; j < n; ++j) {
      const size_t i = begin + j;
      if (i / blockSize != block) {
        block = i / blockSize;
        m = scaleAt(out, block);
        normalise = BlockNormaliser(m);
      }
      if (!blockHasCodes(m)) {  // all zeros, or a non-finite block: code 0
        if (residual) residual[i] = 0.0f;
        continue;
      }
      const float v = encodedValue<Format>(in, residual, i);
      const uint32_t code = signedCode(magnitude, normalise, bits, v);
      codes[j] = static_cast<uint8_t>(code);
      if (residual) residual[i] = v - m * levels.level[code];
    }
    storeGroup(packed, g, bits, n, packGroup(codes, n, bits));
  }
}

// The CPU's decode (quantize_cpu.cc): element i is m * level(code). A NaN
// scale gives NaN, which x86 propagates as the canonical NaN the scale
// holds but a GPU replaces by 0x7fffffff: canonicalised to match.
template <typename Sink>
__global__ void decodeKernel(const __grid_constant__ LevelTable levels, int bits, size_t blockSize,
                             size_t blocks, const unsigned char* in, size_t count, Sink sink) {
  const unsigned char* packed = in + blocks * sizeof(float);
  const size_t groups = (count + kGroup - 1) / kGroup;
  for (size_t g = firstItem(); g < groups; g += itemStride()) {
    const size_t begin = g * kGroup;
    const size_t n = min(kGroup, count - begin);
    uint8_t codes[kGroup];
    unpackGroup(loadGroup(packed, g, bits, n), n, bits, codes);
    for (size_t j = 0; j < n; ++j) {
      const size_t i = begin + j;
      sink(i, canonicaliseNaN(scaleAt(in, i / blockSize) * levels.level[codes[j]]));
    }
  }
}

template <typename Format>
struct StoreDecoded {
  typename Format::Storage* out;
  __device__ void operator()(size_t i, float v) const { out[i] = Format::store(v); }
};

struct AddDecoded {
  float* acc;
  __device__ void operator()(size_t i, float v) const { acc[i] = canonicaliseNaN(acc[i] + v); }
};

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
    decodeKernel<<<blocksFor((count + kGroup - 1) / kGroup), kThreadsPerBlock, 0, stream>>>(
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
      quantizeCodesKernel<Format>
          <<<blocksFor((count + kGroup - 1) / kGroup), kThreadsPerBlock, 0, stream>>>(
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

// The per-thread work of the CUDA codecs (quantize_cuda.cu), as host-and-
// device functions: one group of 8 elements (exactly `bits` packed bytes)
// encoded or decoded, and one lane's share of a block's scale. The kernels
// run them in grid-stride loops; tests/gpu/logic_codecs.cc runs
// them in plain loops on the CPU against the CPU codec, so the indexing,
// block crossing and packing are checked even where there is no GPU.
// Outside nvcc SPCCL_HOST_DEVICE is empty and this is ordinary C++.
#pragma once

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/quantize_element.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

constexpr size_t kCodeGroup = 8;  // codes per packed group of `bits` bytes

// signedLevels() of a spec (quantizer_levels.h), as a plain array that a
// kernel can take by value.
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

SPCCL_HOST_DEVICE inline size_t codeGroups(size_t count) {
  return (count + kCodeGroup - 1) / kCodeGroup;
}

// Scales are f32 at the start of the encoding, at any alignment.
SPCCL_HOST_DEVICE inline float scaleAt(const unsigned char* encoded, size_t block) {
  float m;
  memcpy(&m, encoded + block * sizeof(float), sizeof(float));
  return m;
}

// The CPU's blockScale (quantize_cpu.cc) as a running state: a lane adds
// its strided elements, lanes merge (max is order-independent over the
// finite magnitudes it sees; NaN never enters it, it sets the flag).
struct ScaleAccumulator {
  float m = 0;
  bool nonFinite = false;

  SPCCL_HOST_DEVICE void add(float value) {
    const float a = std::fabs(value);
    m = a > m ? a : m;
    nonFinite |= !(a <= FLT_MAX);
  }
  SPCCL_HOST_DEVICE void merge(float otherM, bool otherNonFinite) {
    m = otherM > m ? otherM : m;
    nonFinite |= otherNonFinite;
  }
  SPCCL_HOST_DEVICE float scale() const { return nonFinite ? canonicalNaN<float>() : m; }
};

// Group g's bytes, little-endian as the CPU's memcpy of a 64-bit word on
// x86-64: `bits` bytes for a full group, fewer for a short last one.
SPCCL_HOST_DEVICE inline void storeGroup(unsigned char* packed, size_t g, int bits, size_t n,
                                         uint64_t word) {
  unsigned char* at = packed + g * bits;
  const size_t bytes = (n * bits + 7) / 8;
  for (size_t k = 0; k < bytes; ++k) at[k] = static_cast<unsigned char>(word >> (8 * k));
}

SPCCL_HOST_DEVICE inline uint64_t loadGroup(const unsigned char* packed, size_t g, int bits,
                                            size_t n) {
  const unsigned char* at = packed + g * bits;
  const size_t bytes = (n * bits + 7) / 8;
  uint64_t word = 0;
  for (size_t k = 0; k < bytes; ++k) word |= static_cast<uint64_t>(at[k]) << (8 * k);
  return word;
}

// quantizePiece (quantize_cpu.cc) for group g: codes (and residuals) of
// its elements, packed. The scales are already at the start of `encoded`;
// the codes go to `packed`. The normaliser (one division) is rebuilt only
// when the group crosses into another block.
template <typename Format, typename Magnitude>
SPCCL_HOST_DEVICE void quantizeGroup(const Magnitude& magnitude, const LevelTable& levels, int bits,
                                     size_t blockSize, const typename Format::Storage* in,
                                     float* residual, size_t count, const unsigned char* encoded,
                                     unsigned char* packed, size_t g) {
  const size_t begin = g * kCodeGroup;
  const size_t n = count - begin < kCodeGroup ? count - begin : kCodeGroup;
  uint8_t codes[kCodeGroup] = {};
  size_t block = begin / blockSize;
  float m = scaleAt(encoded, block);
  BlockNormaliser normalise(m);
  for (size_t j = 0; j < n; ++j) {
    const size_t i = begin + j;
    if (i / blockSize != block) {
      block = i / blockSize;
      m = scaleAt(encoded, block);
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

// The CPU's decode (quantize_cpu.cc) for group g: sink(i, m * level(code)).
// A NaN scale gives NaN, which x86 propagates as the canonical NaN the
// scale holds but a GPU turns into 0x7fffffff: canonicalised to match.
template <typename Sink>
SPCCL_HOST_DEVICE void decodeGroup(const LevelTable& levels, int bits, size_t blockSize,
                                   const unsigned char* encoded, const unsigned char* packed,
                                   size_t count, size_t g, const Sink& sink) {
  const size_t begin = g * kCodeGroup;
  const size_t n = count - begin < kCodeGroup ? count - begin : kCodeGroup;
  uint8_t codes[kCodeGroup];
  unpackGroup(loadGroup(packed, g, bits, n), n, bits, codes);
  for (size_t j = 0; j < n; ++j) {
    const size_t i = begin + j;
    sink(i, canonicaliseNaN(scaleAt(encoded, i / blockSize) * levels.level[codes[j]]));
  }
}

template <typename Format>
struct StoreDecoded {
  typename Format::Storage* out;
  SPCCL_HOST_DEVICE void operator()(size_t i, float v) const { out[i] = Format::store(v); }
};

struct AddDecoded {
  float* acc;
  SPCCL_HOST_DEVICE void operator()(size_t i, float v) const {
    acc[i] = canonicaliseNaN(acc[i] + v);
  }
};

}  // namespace spccl::kernels::cuda

// The per-thread work of the CUDA codecs (quantize_cuda.cu), as host-and-
// device functions: one group of 8 elements (exactly `bits` packed bytes)
// encoded, one element decoded, and one lane's share of a block's scale. The kernels
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

// The code of element i: its `bits` bits at bit i*bits of the LSB-first
// stream (bit_packing.h), within one byte or across two; the second byte
// is read only when the code reaches into it, so never past the stream.
SPCCL_HOST_DEVICE inline uint32_t codeAt(const unsigned char* packed, int bits, size_t i) {
  const size_t bit = i * static_cast<size_t>(bits);
  const unsigned shift = static_cast<unsigned>(bit & 7);
  uint32_t window = packed[bit >> 3];
  if (shift + static_cast<unsigned>(bits) > 8)
    window |= static_cast<uint32_t>(packed[(bit >> 3) + 1]) << 8;
  return (window >> shift) & ((1u << bits) - 1);
}

// The CPU's decode (quantize_cpu.cc) for element i: sink(i, m * level).
// One element per thread, so a warp's stores are contiguous. A NaN scale
// gives NaN, which x86 propagates as the canonical NaN the scale holds but
// a GPU turns into 0x7fffffff: canonicalised to match.
template <typename Sink>
SPCCL_HOST_DEVICE void decodeElementAt(const LevelTable& levels, int bits, size_t blockSize,
                                       const unsigned char* encoded, const unsigned char* packed,
                                       size_t i, const Sink& sink) {
  const float level = levels.level[codeAt(packed, bits, i)];
  sink(i, canonicaliseNaN(scaleAt(encoded, i / blockSize) * level));
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

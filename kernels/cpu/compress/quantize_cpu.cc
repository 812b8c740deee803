// The codecs of kernels.h on the CPU: per-block scales, the magnitude
// quantizers of quantizer_levels.h, shared sign handling and bit packing.
//
// Work goes a segment of kSegment elements at a time (a multiple of 8, so
// each segment's codes start on a byte boundary of the packed stream);
// within a segment, block by block, so that each element finds its scale
// without a division. Codes live in a small stack buffer between the
// quantizer and the packer.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/cpu/compress/bit_packing.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/compress/quantize_element.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cpu/element_format.h"

namespace spccl::kernels {
namespace {

constexpr size_t kSegment = 4096;
static_assert(kSegment % 8 == 0);

// Scales are f32 in host order at the start of the encoding; memcpy keeps
// the reads well-defined whatever the buffer's alignment.
float scaleAt(const unsigned char* encoded, size_t block) {
  float m;
  std::memcpy(&m, encoded + block * sizeof(float), sizeof(float));
  return m;
}

// m = max|v| over the block, or NaN when the block holds inf or NaN.
template <typename Format>
float blockScale(const typename Format::Storage* in, const float* residual, size_t begin,
                 size_t end) {
  float m = 0;
  bool nonFinite = false;
  for (size_t i = begin; i < end; ++i) {
    const float a = std::fabs(encodedValue<Format>(in, residual, i));
    m = a > m ? a : m;
    nonFinite |= !(a <= FLT_MAX);
  }
  return nonFinite ? canonicalNaN<float>() : m;
}

struct BlockCursor {
  size_t blockSize;
  size_t block(size_t i) const { return i / blockSize; }
  size_t end(size_t block, size_t count) const { return std::min(count, (block + 1) * blockSize); }
};

// Codes of in[begin, end), one block's piece, into codes[0, end - begin)
// (the per-element steps are quantize_element.h's).
template <typename Format, typename Magnitude>
void quantizePiece(const Magnitude& magnitude, const std::array<float, 256>& levels, int bits,
                   float m, const typename Format::Storage* in, float* residual, size_t begin,
                   size_t end, uint8_t* codes) {
  const size_t n = end - begin;
  if (!blockHasCodes(m)) {  // all zeros, or a non-finite block
    std::memset(codes, 0, n);
    if (residual) std::fill(residual + begin, residual + end, 0.0f);
    return;
  }
  const BlockNormaliser normalise(m);
  for (size_t j = 0; j < n; ++j) {
    const float v = encodedValue<Format>(in, residual, begin + j);
    const uint32_t code = signedCode(magnitude, normalise, bits, v);
    codes[j] = static_cast<uint8_t>(code);
    if (residual) residual[begin + j] = v - m * levels[code];
  }
}

template <typename Format, typename Magnitude>
void quantizeWith(const Magnitude& magnitude, const QuantizerSpec& spec, const void* input,
                  size_t count, unsigned char* out, float* residual) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  const BlockCursor blocks{spec.blockSize};
  const size_t nblocks = quantizedBlockCount(spec, count);
  for (size_t b = 0; b < nblocks; ++b) {
    const float m = blockScale<Format>(in, residual, b * spec.blockSize, blocks.end(b, count));
    std::memcpy(out + b * sizeof(float), &m, sizeof(float));
  }
  const std::array<float, 256> levels = signedLevels(magnitude, spec.bits);
  unsigned char* packed = out + nblocks * sizeof(float);
  uint8_t codes[kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = blocks.block(i);
      const size_t pieceEnd = std::min(segmentEnd, blocks.end(b, count));
      quantizePiece<Format>(magnitude, levels, spec.bits, scaleAt(out, b), in, residual, i,
                            pieceEnd, codes + (i - s));
      i = pieceEnd;
    }
    packCodes(codes, segmentEnd - s, spec.bits, packed + s / 8 * spec.bits);
  }
}

template <typename Format>
void quantizeElements(const QuantizerSpec& spec, const void* in, size_t count, unsigned char* out,
                      float* residual) {
  const int n = spec.bits - 1;
  if (spec.codec == Codec::Linear)
    quantizeWith<Format>(LinearMagnitude(n), spec, in, count, out, residual);
  else
    quantizeWith<Format>(PiecewiseMagnitude(n), spec, in, count, out, residual);
}

std::array<float, 256> levelsOf(const QuantizerSpec& spec) {
  const int n = spec.bits - 1;
  return spec.codec == Codec::Linear ? signedLevels(LinearMagnitude(n), spec.bits)
                                     : signedLevels(PiecewiseMagnitude(n), spec.bits);
}

// emit(i, value) for every element, in order, value = m * level(code).
template <typename Emit>
void decode(const QuantizerSpec& spec, const unsigned char* in, size_t count, Emit&& emit) {
  const std::array<float, 256> levels = levelsOf(spec);
  const BlockCursor blocks{spec.blockSize};
  const unsigned char* packed = in + quantizedBlockCount(spec, count) * sizeof(float);
  uint8_t codes[kSegment];
  for (size_t s = 0; s < count; s += kSegment) {
    const size_t segmentEnd = std::min(count, s + kSegment);
    unpackCodes(packed + s / 8 * spec.bits, segmentEnd - s, spec.bits, codes);
    for (size_t i = s; i < segmentEnd;) {
      const size_t b = blocks.block(i);
      const size_t pieceEnd = std::min(segmentEnd, blocks.end(b, count));
      const float m = scaleAt(in, b);
      for (size_t j = i; j < pieceEnd; ++j) emit(j, m * levels[codes[j - s]]);
      i = pieceEnd;
    }
  }
}

template <typename Format>
void dequantizeElements(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                        void* output) {
  auto* out = static_cast<typename Format::Storage*>(output);
  decode(spec, in, count, [out](size_t i, float v) { out[i] = Format::store(v); });
}

void dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in, size_t count, float* acc) {
  decode(spec, in, count, [acc](size_t i, float v) { acc[i] += v; });
}

template <typename Format>
void widenAdd(float* acc, const void* input, size_t count) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  for (size_t i = 0; i < count; ++i) acc[i] += Format::load(in[i]);
}

template <typename Format>
void addType(KernelTable& table, spcclDataType_t type) {
  table.quantize[type] = quantizeElements<Format>;
  table.dequantize[type] = dequantizeElements<Format>;
  table.widenAdd[type] = widenAdd<Format>;
}

}  // namespace

void addCompressionKernels(KernelTable& table) {
  addType<NativeFormat<float>>(table, spcclFloat32);
  addType<HalfFormat>(table, spcclFloat16);
  addType<Bfloat16Format>(table, spcclBfloat16);
  table.dequantizeAdd = dequantizeAdd;
}

}  // namespace spccl::kernels

// The per-element steps of the codecs (kernels.h) as the CUDA kernels
// (kernels/cuda/quantize_cuda.cu) run them: the scalar formulas of the CPU
// reference (quantize_reference.cc), which the CPU's vectorised codecs
// (codec_passes.h) match byte for byte; tests/gpu's host-logic test checks
// these steps against the CPU codecs.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels {

// The value that is encoded: the input, plus the error-feedback residual
// when there is one (kernels.h, QuantizeFn).
template <typename Format>
SPCCL_HOST_DEVICE inline float encodedValue(const typename Format::Storage* in,
                                            const float* residual, size_t i) {
  return residual ? Format::load(in[i]) + residual[i] : Format::load(in[i]);
}

// Whether a block's elements get codes: its scale is positive and finite
// (not an all-zero block, nor a block holding inf or NaN whose scale is NaN).
SPCCL_HOST_DEVICE inline bool blockHasCodes(float m) { return m > 0 && !std::isnan(m); }

// x = |v|/m in [0, 1] for a block with codes, formed by multiplying with
// 1/m, except for a subnormal scale whose reciprocal overflows, which
// divides instead.
struct BlockNormaliser {
  float m;
  bool divide;
  float inv;

  SPCCL_HOST_DEVICE explicit BlockNormaliser(float scale)
      : m(scale), divide(scale < FLT_MIN), inv(1.0f / scale) {}
  SPCCL_HOST_DEVICE float operator()(float magnitude) const {
    return std::min(divide ? magnitude / m : magnitude * inv, 1.0f);
  }
};

// The code of v: the magnitude code of |v|/m (quantizer_levels.h) with the
// sign bit above it.
template <typename Magnitude>
SPCCL_HOST_DEVICE inline uint32_t signedCode(const Magnitude& magnitude,
                                             const BlockNormaliser& normalise, int bits, float v) {
  const uint32_t signBit = 1u << (bits - 1);
  return magnitude.code(normalise(std::fabs(v))) | (std::signbit(v) ? signBit : 0u);
}

}  // namespace spccl::kernels

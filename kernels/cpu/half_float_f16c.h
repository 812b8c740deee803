// half_float.h's binary16 conversions over arrays with F16C (vcvtph2ps,
// vcvtps2ph: 8 elements per instruction), for the codecs' AVX2 + F16C
// variant (kernels/cpu/compress/quantize_cpu.cc). Only on a CPU with AVX and
// F16C (both need the VEX encoding); callers check with
// __builtin_cpu_supports.
//
// Same bits as halfToFloat/floatToHalf for every input, NaN included, so
// the hardware needs no fix-up: both are IEEE conversions (f16 -> f32
// exact, f32 -> f16 rounded to nearest even, here by the instruction's
// immediate, not by MXCSR), and x86 converts a NaN as half_float.h does,
// keeping the sign and the top payload bits and setting the quiet bit.
// tests/unit/test_half_float_f16c.cc checks every half, every rounding tie,
// every NaN payload and, by hand, every float.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spccl::kernels {

#if defined(__x86_64__) || defined(__i386__)
// out[i] = halfToFloat(in[i]) for i < n.
void halfToFloatF16c(const uint16_t* in, size_t n, float* out);
// out[i] = floatToHalf(in[i]) for i < n.
void floatToHalfF16c(const float* in, size_t n, uint16_t* out);
// acc[i] += halfToFloat(in[i]) for i < n, one f32 addition each (kernels.h's
// widenAdd), in one pass rather than widening into a buffer first.
void addHalfToFloatF16c(const uint16_t* in, size_t n, float* acc);
#endif

}  // namespace spccl::kernels

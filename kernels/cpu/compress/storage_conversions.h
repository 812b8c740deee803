// How the fast codecs (codec_passes.h) read and write a tensor's elements
// as the f32 they compute in, the same bits as element_format.h's load and
// store. A conversion gives, for a run of n elements, inputs(in, n,
// scratch) to read (x[j]) and outputs(out, scratch) to write (put(j, v),
// then finish(n)); scratch holds n floats. addWidened(in, n, acc) is
// widenAdd: acc[i] += the input widened.
//
// Element-wise conversions are inlined into the codec loops, which the
// compiler then vectorises together with them: f32, bf16's shift, and
// f16's bit manipulation (half_float.h). F16C's cannot be: its intrinsics
// need the F16C target, which codec_passes.h's default-target templates
// lack (half_float_f16c.cc), so it converts whole runs out of line, into
// and out of the scratch floats.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/compress/magnitude_lanes.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cpu/half_float_f16c.h"

namespace spccl::kernels {

template <typename Format>
struct ElementwiseConversion {
  using Storage = typename Format::Storage;
  struct Inputs {
    const Storage* in;
    SPCCL_ALWAYS_INLINE float operator[](size_t j) const { return Format::load(in[j]); }
  };
  struct Outputs {
    Storage* out;
    SPCCL_ALWAYS_INLINE void put(size_t j, float v) const { out[j] = Format::store(v); }
    SPCCL_ALWAYS_INLINE void finish(size_t) const {}
  };
  SPCCL_ALWAYS_INLINE static Inputs inputs(const Storage* in, size_t, float*) { return {in}; }
  SPCCL_ALWAYS_INLINE static Outputs outputs(Storage* out, float*) { return {out}; }
  SPCCL_ALWAYS_INLINE static void addWidened(const Storage* in, size_t n, float* acc) {
    for (size_t i = 0; i < n; ++i) acc[i] += Format::load(in[i]);
  }
};

using Float32Conversion = ElementwiseConversion<NativeFormat<float>>;

#if defined(__x86_64__) || defined(__i386__)
// f16 by F16C; only on a CPU that has it.
struct F16cHalfConversion {
  using Storage = uint16_t;
  struct Inputs {
    const float* widened;
    SPCCL_ALWAYS_INLINE float operator[](size_t j) const { return widened[j]; }
  };
  struct Outputs {
    uint16_t* out;
    float* staged;
    SPCCL_ALWAYS_INLINE void put(size_t j, float v) const { staged[j] = v; }
    void finish(size_t n) const { floatToHalfF16c(staged, n, out); }
  };
  static Inputs inputs(const uint16_t* in, size_t n, float* scratch) {
    halfToFloatF16c(in, n, scratch);
    return {scratch};
  }
  SPCCL_ALWAYS_INLINE static Outputs outputs(uint16_t* out, float* scratch) {
    return {out, scratch};
  }
  static void addWidened(const uint16_t* in, size_t n, float* acc) {
    addHalfToFloatF16c(in, n, acc);
  }
};
#endif

}  // namespace spccl::kernels

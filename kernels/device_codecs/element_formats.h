// The element types of the device codecs' input and output (f32, f16,
// bf16) as a kernel parameter, and the dispatch from it to the formats of
// kernels/cpu/element_format.h: f16 and bf16 are widened to f32 on load
// and rounded once on store, by the same conversions as the CPU codecs
// (quantize[type], dequantize[type]), so the device codecs keep their bits.
#pragma once

#include <cstdint>

#include "kernels/cpu/element_format.h"
#include "kernels/host_device.h"

namespace spccl::kernels::device_codecs {

enum ElementType : int32_t { kElementF32 = 0, kElementF16 = 1, kElementBf16 = 2 };

// fn(Format{}) for the element type; an unknown value is refused at launch
// (the emulated driver) and never reaches here from libspccl.
template <typename Fn>
SPCCL_HOST_DEVICE void withElementFormat(int32_t type, const Fn& fn) {
  switch (type) {
    case kElementF16:
      fn(HalfFormat{});
      break;
    case kElementBf16:
      fn(Bfloat16Format{});
      break;
    default:
      fn(NativeFormat<float>{});
      break;
  }
}

SPCCL_HOST_DEVICE inline uint64_t elementBytes(int32_t type) { return type == kElementF32 ? 4 : 2; }

}  // namespace spccl::kernels::device_codecs

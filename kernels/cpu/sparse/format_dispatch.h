// Calls a generic lambda with the element format (element_format.h) of a
// spcclDataType_t, so each sparse kernel is one template over formats.
#pragma once

#include <cstdint>
#include <utility>

#include "kernels/cpu/element_format.h"
#include "spccl.h"

namespace spccl::kernels {

// An element is zero when it compares equal to 0 (sparse_kernels.h): for
// integers that is the value 0; for IEEE formats both signed zeros and
// nothing else, i.e. the bits without the sign are 0 (NaN never is). Testing
// bits keeps f16/bf16 off the float conversion and vectorises for all types.
template <typename Format>
struct ZeroTest {
  using Storage = typename Format::Storage;
  SPCCL_HOST_DEVICE static bool isZero(Storage v) { return v == 0; }
};
template <>
struct ZeroTest<NativeFormat<float>> {
  SPCCL_HOST_DEVICE static bool isZero(float v) { return (std::bit_cast<uint32_t>(v) << 1) == 0; }
};
template <>
struct ZeroTest<NativeFormat<double>> {
  SPCCL_HOST_DEVICE static bool isZero(double v) { return (std::bit_cast<uint64_t>(v) << 1) == 0; }
};
template <>
struct ZeroTest<HalfFormat> {
  SPCCL_HOST_DEVICE static bool isZero(uint16_t v) { return (v & 0x7fffu) == 0; }
};
template <>
struct ZeroTest<Bfloat16Format> {
  SPCCL_HOST_DEVICE static bool isZero(uint16_t v) { return (v & 0x7fffu) == 0; }
};

// fn(Format{}) for the format of `type`; `fallback` for a type out of range
// (callers validate types at the API boundary).
template <typename Fn, typename Result>
Result withFormat(spcclDataType_t type, Result fallback, Fn&& fn) {
  switch (type) {
    case spcclInt8:
      return fn(NativeFormat<int8_t>{});
    case spcclUint8:
      return fn(NativeFormat<uint8_t>{});
    case spcclInt32:
      return fn(NativeFormat<int32_t>{});
    case spcclUint32:
      return fn(NativeFormat<uint32_t>{});
    case spcclInt64:
      return fn(NativeFormat<int64_t>{});
    case spcclUint64:
      return fn(NativeFormat<uint64_t>{});
    case spcclFloat16:
      return fn(HalfFormat{});
    case spcclFloat32:
      return fn(NativeFormat<float>{});
    case spcclFloat64:
      return fn(NativeFormat<double>{});
    case spcclBfloat16:
      return fn(Bfloat16Format{});
    default:
      return fallback;
  }
}

}  // namespace spccl::kernels

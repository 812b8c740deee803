// How each spcclDataType_t is stored and in which type it is computed, so
// that one loop template serves all ten types.
//
// A format names Storage (the bytes in the buffer), Compute (what ops work
// on), and load/store between them; f16/bf16 widen to float and round once
// on store (kernels.h).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/half_float.h"
#include "kernels/host_device.h"

namespace spccl::kernels {

// int*, uint*, float, double: computed as stored. Integer wrap-around is the
// ops' business (reduce_ops.h), not the format's.
template <typename T>
struct NativeFormat {
  using Storage = T;
  using Compute = T;
  SPCCL_HOST_DEVICE static Compute load(Storage v) { return v; }
  SPCCL_HOST_DEVICE static Storage store(Compute v) { return v; }
};

struct HalfFormat {
  using Storage = uint16_t;
  using Compute = float;
  SPCCL_HOST_DEVICE static Compute load(Storage v) { return halfToFloat(v); }
  SPCCL_HOST_DEVICE static Storage store(Compute v) { return floatToHalf(v); }
};

struct Bfloat16Format {
  using Storage = uint16_t;
  using Compute = float;
  SPCCL_HOST_DEVICE static Compute load(Storage v) { return bfloat16ToFloat(v); }
  SPCCL_HOST_DEVICE static Storage store(Compute v) { return floatToBfloat16(v); }
};

// Every NaN a kernel produces is this one (sign clear, quiet bit only), so
// that results never depend on which operand's payload won and a CUDA
// implementation can match the CPU bit for bit. Converted to f16/bf16 it
// is 0x7e00/0x7fc0.
template <typename F>
constexpr F canonicalNaN() {
  static_assert(std::is_floating_point_v<F>);
  return std::numeric_limits<F>::quiet_NaN();
}
static_assert(std::bit_cast<uint32_t>(canonicalNaN<float>()) == 0x7fc00000u);
static_assert(std::bit_cast<uint64_t>(canonicalNaN<double>()) == 0x7ff8000000000000ull);

}  // namespace spccl::kernels

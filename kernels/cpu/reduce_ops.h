// The element-wise operations behind the reduce and divide kernels, one
// functor per spcclRedOp_t, written once for every compute type.
//
// Every op is commutative bit for bit: integers trivially; float sum/prod
// are IEEE-commutative except for which NaN payload survives, so NaN
// results are replaced by canonicalNaN(); min/max order ±0 and return the
// canonical NaN when either side is NaN. A pairwise exchange therefore
// leaves both partners with identical bits (kernels.h).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/element_format.h"

namespace spccl::kernels {

// Signed overflow is UB, so integers add and multiply in an unsigned type;
// types narrower than unsigned int would be promoted to (signed) int, whose
// product can still overflow, hence the floor at unsigned int.
template <typename T>
using WrappingType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
using SameSizeBits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <typename F>
SPCCL_HOST_DEVICE inline F canonicaliseNaN(F v) {
  return v != v ? canonicalNaN<F>() : v;  // NOLINT(misc-redundant-expression): the NaN test
}

struct SumOp {
  template <typename T>
  SPCCL_HOST_DEVICE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrappingType<T>>(a) + static_cast<WrappingType<T>>(b));
    } else {
      return canonicaliseNaN(a + b);
    }
  }
};

struct ProdOp {
  template <typename T>
  SPCCL_HOST_DEVICE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrappingType<T>>(a) * static_cast<WrappingType<T>>(b));
    } else {
      return canonicaliseNaN(a * b);
    }
  }
};

// Float min/max take the x86 minps/maxps shape (x < y ? x : y) in both
// operand orders: the two agree unless the operands compare equal (then
// they differ only for ±0, where OR keeps a set sign bit so min gives -0
// and AND clears it so max gives +0) or one is NaN (then the unordered test
// returns the canonical NaN). This vectorises to a handful of SSE
// instructions, unlike a chain of equality tests.
template <typename T>
SPCCL_HOST_DEVICE inline T bitsOr(T x, T y) {
  using Bits = SameSizeBits<T>;
  return std::bit_cast<T>(std::bit_cast<Bits>(x) | std::bit_cast<Bits>(y));
}

template <typename T>
SPCCL_HOST_DEVICE inline T bitsAnd(T x, T y) {
  using Bits = SameSizeBits<T>;
  return std::bit_cast<T>(std::bit_cast<Bits>(x) & std::bit_cast<Bits>(y));
}

struct MaxOp {
  template <typename T>
  SPCCL_HOST_DEVICE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      const T result = bitsAnd(a > b ? a : b, b > a ? b : a);
      // NOLINTNEXTLINE(misc-redundant-expression): x != x is the NaN test, on host and device
      return a != a || b != b ? canonicalNaN<T>() : result;
    }
  }
};

struct MinOp {
  template <typename T>
  SPCCL_HOST_DEVICE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      const T result = bitsOr(a < b ? a : b, b < a ? b : a);
      // NOLINTNEXTLINE(misc-redundant-expression): x != x is the NaN test, on host and device
      return a != a || b != b ? canonicalNaN<T>() : result;
    }
  }
};

// v / divisor, the exact quotient truncated toward zero and wrapped to T.
// Integers divide in 64 bits so that a divisor beyond T's range still
// works; the one quotient that overflows int64 (INT64_MIN / -1) is the
// negation, taken in unsigned arithmetic. An unsigned v is divided by
// |divisor| and negated (wrapping) for a negative divisor. divisor != 0
// (callers pass the rank count).
template <typename T>
SPCCL_HOST_DEVICE inline T divideTruncating(T v, int divisor) {
  if constexpr (std::is_floating_point_v<T>) {
    return canonicaliseNaN(v / static_cast<T>(divisor));
  } else if constexpr (std::is_signed_v<T>) {
    if (divisor == -1) return static_cast<T>(WrappingType<T>{0} - static_cast<WrappingType<T>>(v));
    return static_cast<T>(static_cast<int64_t>(v) / divisor);
  } else {
    const uint64_t magnitude =
        divisor < 0 ? 0 - static_cast<uint64_t>(divisor) : static_cast<uint64_t>(divisor);
    const uint64_t quotient = static_cast<uint64_t>(v) / magnitude;
    return static_cast<T>(divisor < 0 ? 0 - quotient : quotient);
  }
}

}  // namespace spccl::kernels

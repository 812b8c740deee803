// The reference values of the dense collectives: inputs chosen per op so
// that every partial result is exact in every type (small integers: bf16
// holds integers up to 256), the unique correct output they reduce to
// whatever the order, and tags naming (rank, peer, index) for the data
// movement collectives. Shared by tests/integration/coll_check.cc and
// tests/gpu/test_gpu_collectives.cc; public API only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "spccl.h"

namespace spccl::coll_reference {

inline constexpr spcclDataType_t kAllTypes[] = {
    spcclInt8,   spcclUint8,   spcclInt32,   spcclUint32,  spcclInt64,
    spcclUint64, spcclFloat16, spcclFloat32, spcclFloat64, spcclBfloat16};
inline constexpr spcclRedOp_t kAllOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};

inline uint16_t floatToHalf(float value) {
  // Exact for the small integers used here; truncates other normal
  // numbers in f16's range. Zero and normal numbers only.
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if ((bits & 0x7fffffffu) == 0) return sign;
  int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ffu));
}

inline double halfToDouble(uint16_t half) {
  int exponent = (half >> 10) & 0x1f;
  double mantissa = half & 0x3ff;
  double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (half & 0x8000) ? -magnitude : magnitude;
}

// Stores an integer value as element `index` of a buffer of `type`,
// wrapping for the integer types as the library does.
inline void store(spcclDataType_t type, void* base, size_t index, int64_t value) {
  char* at = static_cast<char*>(base) + index * spcclTypeSize(type);
  switch (type) {
    case spcclInt8: {
      int8_t v = static_cast<int8_t>(value);
      std::memcpy(at, &v, 1);
      break;
    }
    case spcclUint8: {
      uint8_t v = static_cast<uint8_t>(value);
      std::memcpy(at, &v, 1);
      break;
    }
    case spcclInt32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case spcclUint32: {
      uint32_t v = static_cast<uint32_t>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case spcclInt64:
      std::memcpy(at, &value, 8);
      break;
    case spcclUint64: {
      uint64_t v = static_cast<uint64_t>(value);
      std::memcpy(at, &v, 8);
      break;
    }
    case spcclFloat16: {
      uint16_t v = floatToHalf(static_cast<float>(value));
      std::memcpy(at, &v, 2);
      break;
    }
    case spcclBfloat16: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t v = static_cast<uint16_t>(bits >> 16);
      std::memcpy(at, &v, 2);
      break;
    }
    case spcclFloat32: {
      float v = static_cast<float>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case spcclFloat64: {
      double v = static_cast<double>(value);
      std::memcpy(at, &v, 8);
      break;
    }
    default:
      break;
  }
}

// For messages only.
inline double load(spcclDataType_t type, const void* base, size_t index) {
  const char* at = static_cast<const char*>(base) + index * spcclTypeSize(type);
  switch (type) {
    case spcclInt8: {
      int8_t v;
      std::memcpy(&v, at, 1);
      return v;
    }
    case spcclUint8: {
      uint8_t v;
      std::memcpy(&v, at, 1);
      return v;
    }
    case spcclInt32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case spcclUint32: {
      uint32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case spcclInt64: {
      int64_t v;
      std::memcpy(&v, at, 8);
      return static_cast<double>(v);
    }
    case spcclUint64: {
      uint64_t v;
      std::memcpy(&v, at, 8);
      return static_cast<double>(v);
    }
    case spcclFloat16: {
      uint16_t v;
      std::memcpy(&v, at, 2);
      return halfToDouble(v);
    }
    case spcclBfloat16: {
      uint16_t v;
      std::memcpy(&v, at, 2);
      uint32_t bits = static_cast<uint32_t>(v) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case spcclFloat32: {
      float v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case spcclFloat64: {
      double v;
      std::memcpy(&v, at, 8);
      return v;
    }
    default:
      return 0;
  }
}

inline bool isFloat(spcclDataType_t type) {
  return type == spcclFloat16 || type == spcclBfloat16 || type == spcclFloat32 ||
         type == spcclFloat64;
}

// The integer value a type holds after wrapping (what the library's
// integer arithmetic produces).
inline int64_t wrapped(spcclDataType_t type, int64_t value) {
  switch (type) {
    case spcclInt8:
      return static_cast<int8_t>(value);
    case spcclUint8:
      return static_cast<uint8_t>(value);
    case spcclInt32:
      return static_cast<int32_t>(value);
    case spcclUint32:
      return static_cast<uint32_t>(value);
    default:
      return value;
  }
}

// Input element `index` of `rank` for a reduction with `op`.
inline int64_t reductionInput(spcclRedOp_t op, int rank, size_t index, int nranks) {
  switch (op) {
    case spcclSum:
      return static_cast<int64_t>((rank * 7 + index * 3) % 7) - 3;
    case spcclProd:
      if ((rank + index) % 7 == 0) return 2;
      return (rank + 2 * index) % 5 == 0 ? -1 : 1;
    case spcclAvg: {
      // base + delta with deltas summing to zero, so the sum is n * base
      // and the average exact.
      int64_t base = 1 + static_cast<int64_t>(index % 4);
      int64_t delta = (nranks % 2 == 1 && rank == nranks - 1) ? 0 : (rank % 2 == 0 ? 1 : -1);
      return base + delta;
    }
    default:
      return static_cast<int64_t>((rank * 13 + index * 7) % 101);  // max, min
  }
}

inline int64_t reductionReference(spcclDataType_t type, spcclRedOp_t op, size_t index, int nranks) {
  int64_t acc = reductionInput(op, 0, index, nranks);
  for (int r = 1; r < nranks; ++r) {
    int64_t v = reductionInput(op, r, index, nranks);
    switch (op) {
      case spcclProd:
        acc *= v;
        break;
      case spcclMax:
        acc = v > acc ? v : acc;
        break;
      case spcclMin:
        acc = v < acc ? v : acc;
        break;
      default:
        acc += v;
        break;
    }
  }
  if (op == spcclAvg) return isFloat(type) ? acc / nranks : wrapped(type, acc) / nranks;
  return acc;
}

// A value naming (rank, peer, index) for the data-movement collectives;
// exact in every type.
inline int64_t tagValue(int rank, int peer, size_t index) {
  return static_cast<int64_t>((rank * 31 + peer * 7 + index) % 100);
}

// Rank `from` sends this many elements to rank `to`: a mix of empty,
// partial and full blocks.
inline size_t variableCount(size_t count, int from, int to) {
  return count * static_cast<size_t>(1 + (from + 2 * to) % 3) / 3;
}

inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash = 1469598103934665603ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

}  // namespace spccl::coll_reference

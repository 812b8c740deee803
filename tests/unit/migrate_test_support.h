// Typed values for the migration tests: small integers, which every type
// (half and bfloat16 included) holds exactly, so reductions in any order
// give the reference bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/half_float.h"
#include "spccl.h"

namespace spccl::migrate_test {

inline void storeValue(spcclDataType_t type, void* at, double v) {
  switch (type) {
    case spcclInt8: {
      int8_t x = static_cast<int8_t>(v);
      std::memcpy(at, &x, 1);
      break;
    }
    case spcclUint8: {
      uint8_t x = static_cast<uint8_t>(v);
      std::memcpy(at, &x, 1);
      break;
    }
    case spcclInt32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case spcclUint32: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case spcclInt64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(at, &x, 8);
      break;
    }
    case spcclUint64: {
      uint64_t x = static_cast<uint64_t>(v);
      std::memcpy(at, &x, 8);
      break;
    }
    case spcclFloat16: {
      uint16_t x = kernels::floatToHalf(static_cast<float>(v));
      std::memcpy(at, &x, 2);
      break;
    }
    case spcclFloat32: {
      float x = static_cast<float>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case spcclFloat64:
      std::memcpy(at, &v, 8);
      break;
    case spcclBfloat16: {
      uint16_t x = kernels::floatToBfloat16(static_cast<float>(v));
      std::memcpy(at, &x, 2);
      break;
    }
    default:
      break;
  }
}

// count elements of type holding values(i).
template <typename F>
std::vector<unsigned char> typedBuffer(spcclDataType_t type, size_t count, F values) {
  const size_t es = spcclTypeSize(type);
  std::vector<unsigned char> buffer(count * es);
  for (size_t i = 0; i < count; ++i) storeValue(type, buffer.data() + i * es, values(i));
  return buffer;
}

constexpr spcclDataType_t kAllTypes[] = {spcclInt8,    spcclUint8,   spcclInt32,   spcclUint32,
                                         spcclInt64,   spcclUint64,  spcclFloat16, spcclFloat32,
                                         spcclFloat64, spcclBfloat16};

}  // namespace spccl::migrate_test

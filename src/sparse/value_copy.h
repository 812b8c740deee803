// Copies one element of valueBytes (1, 2, 4 or 8: spcclTypeSize) with a
// fixed-size memcpy, which compiles to a single move instead of a call.
#pragma once

#include <cstddef>
#include <cstring>

namespace spccl::sparse {

inline void copyValue(unsigned char* dst, const unsigned char* src, size_t valueBytes) {
  switch (valueBytes) {
    case 1:
      *dst = *src;
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    case 8:
      std::memcpy(dst, src, 8);
      break;
    default:
      std::memcpy(dst, src, valueBytes);
  }
}

}  // namespace spccl::sparse

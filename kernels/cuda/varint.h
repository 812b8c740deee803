// LEB128 varints of position gaps, the Packed sparse encoding
// (src/sparse/packed_encoding.cc), as host-and-device functions for the
// CUDA codec (packed_positions_cuda.cu) and its host test: 7 bits a byte,
// least significant first, high bit = more bytes follow. The reader
// rejects what the CPU decoder rejects: a varint cut off by the end of the
// varint bytes, longer than 10 bytes, or beyond 64 bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

constexpr size_t kMaxVarintBytes = 10;  // ceil(64 / 7)

// Entry i of ascending positions is coded as the gap after entry i - 1.
SPCCL_HOST_DEVICE inline uint64_t gapBefore(const uint64_t* positions, size_t i) {
  return i == 0 ? positions[0] : positions[i] - positions[i - 1] - 1;
}

SPCCL_HOST_DEVICE inline size_t varintLength(uint64_t value) {
  size_t bytes = 1;
  for (; value >= 0x80; value >>= 7) ++bytes;
  return bytes;
}

SPCCL_HOST_DEVICE inline void writeVarint(uint64_t value, unsigned char* out) {
  for (; value >= 0x80; value >>= 7) *out++ = static_cast<unsigned char>(value | 0x80);
  *out = static_cast<unsigned char>(value);
}

// The varint at in[0..available): its length, with *value set, or 0 when
// it is malformed.
SPCCL_HOST_DEVICE inline size_t readVarint(const unsigned char* in, size_t available,
                                           uint64_t* value) {
  uint64_t result = 0;
  for (size_t at = 0, shift = 0;; ++at, shift += 7) {
    if (at == available || at == kMaxVarintBytes || (shift == 63 && in[at] > 1)) return 0;
    result |= static_cast<uint64_t>(in[at] & 0x7f) << shift;
    if ((in[at] & 0x80) == 0) {
      *value = result;
      return at + 1;
    }
  }
}

}  // namespace spccl::kernels::cuda

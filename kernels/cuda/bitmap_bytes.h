// The per-thread work of the bitmap encoder (bitmap_cuda.cu), host-and-
// device so that tests/gpu runs it on the CPU too: over ascending positions,
// the thread at the first position of each byte of the map ORs together the
// bits of all the positions in that byte (at most 8) and writes the byte
// once, so no atomics are needed and the map may sit at any alignment.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

SPCCL_HOST_DEVICE inline void writeBitmapByteAt(size_t j, const uint64_t* sorted, size_t nnz,
                                                unsigned char* map) {
  const uint64_t byte = sorted[j] >> 3;
  if (j > 0 && sorted[j - 1] >> 3 == byte) return;  // not the first in its byte
  unsigned bits = 0;
  for (size_t k = j; k < nnz && sorted[k] >> 3 == byte; ++k) bits |= 1u << (sorted[k] & 7);
  map[byte] = static_cast<unsigned char>(bits);
}

}  // namespace spccl::kernels::cuda

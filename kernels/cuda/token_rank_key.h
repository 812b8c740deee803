// The order of the top-k token choice (src/compress/token_selection.h) as
// an unsigned key, so that a stable ascending radix sort of (key, token)
// pairs lists the tokens best first: higher score first, +0 and -0 equal,
// NaN after every number, equal keys by lower token index (the sort's
// stability). Host-and-device: tests/gpu checks it on the CPU too.
#pragma once

#include <bit>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

SPCCL_HOST_DEVICE inline uint32_t tokenRankKey(float score) {
  if (score != score) return 0xffffffffu;                                       // NaN: last
  const uint32_t bits = std::bit_cast<uint32_t>(score == 0.0f ? 0.0f : score);  // -0 as +0
  // IEEE bits to an unsigned ascending order (negatives reversed), then
  // reversed so that higher scores come first; -inf ends at 0xff800000.
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  return ~ascending;
}

}  // namespace spccl::kernels::cuda

// Zen's hash functions, one source for the CPU (src/sparse) and the CUDA
// kernels (kernels/cuda): h0 (the partition of an index) and h1..hk (slots
// in a partition's parallel memory). tests/gpu compares the GPU's buckets
// with the CPU's.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels {

// The high 64 bits of a * b.
SPCCL_HOST_DEVICE inline uint64_t mulHigh(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// MurmurHash3's 64-bit finaliser fmix64 (A. Appleby): every input bit
// affects every output bit, which is all h0, h1..hk and the Feistel round
// function need.
SPCCL_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// h0 of Zen: mix64(idx ^ seed) reduced to [0, parts) by multiply-shift
// (no modulo bias).
SPCCL_HOST_DEVICE inline int zenOwner(uint64_t idx, uint64_t seed, int parts) {
  return static_cast<int>(mulHigh(mix64(idx ^ seed), static_cast<uint64_t>(parts)));
}

// h_i(idx) in [0, slots), i in 1..k: keyed by seed + i.
SPCCL_HOST_DEVICE inline uint64_t secondLevelSlot(int i, uint64_t idx, uint64_t seed,
                                                  uint64_t slots) {
  return mulHigh(mix64(idx ^ mix64(seed + static_cast<uint64_t>(i))), slots);
}

}  // namespace spccl::kernels

// Zen's hash functions for the device: h0 (the partition of an index) and
// h1..hk (slots in a partition's parallel memory), the same functions as
// the CPU's sparse::mix64 / zenOwner / secondLevelSlot
// (src/sparse/index_partition.h, bucketing_methods.h). tests/gpu compares
// the GPU's buckets with the CPU's, which checks these against those.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace spccl::kernels::cuda {

// MurmurHash3's 64-bit finaliser fmix64 (A. Appleby), as sparse::mix64.
__device__ inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// h0 reduced to [0, parts) by multiply-shift, as sparse::zenOwner.
__device__ inline int zenOwner(uint64_t idx, uint64_t seed, int parts) {
  return static_cast<int>(__umul64hi(mix64(idx ^ seed), static_cast<uint64_t>(parts)));
}

// h_i(idx) in [0, slots), i in 1..k, as sparse::secondLevelSlot.
__device__ inline uint64_t secondLevelSlot(int i, uint64_t idx, uint64_t seed, uint64_t slots) {
  return __umul64hi(mix64(idx ^ mix64(seed + static_cast<uint64_t>(i))), slots);
}

}  // namespace spccl::kernels::cuda

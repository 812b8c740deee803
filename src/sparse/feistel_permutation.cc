#include "sparse/feistel_permutation.h"

#include <bit>

#include "sparse/index_partition.h"

namespace spccl::sparse {

FeistelPermutation::FeistelPermutation(uint64_t universe, uint64_t seed) : universe_(universe) {
  // Bits to number [0, M), rounded up to even, at least 2 (M = 1 still
  // needs two halves). M - 1 < 2^64, so 2h <= 64.
  const int bits = universe <= 1 ? 1 : 64 - std::countl_zero(universe - 1);
  halfBits_ = (bits + 1) / 2;
  halfMask_ = halfBits_ == 32 ? 0xffffffffull : (uint64_t{1} << halfBits_) - 1;
  uint64_t key = seed;
  for (int r = 0; r < kRounds; ++r) {
    key = mix64(key + 0x9e3779b97f4a7c15ull);
    roundKeys_[r] = key;
    roundMultipliers_[r] = mix64(key ^ 0xc2b2ae3d27d4eb4full) | 1;
  }
}

}  // namespace spccl::sparse

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

uint64_t FeistelPermutation::round(int r, uint64_t half) const {
  return ((half ^ roundKeys_[r]) * roundMultipliers_[r]) >> (64 - halfBits_);
}

// (L, R) -> (R, L ^ F_r(R)) per round; decryption runs the rounds backwards.
uint64_t FeistelPermutation::encrypt(uint64_t x) const {
  uint64_t left = x >> halfBits_, right = x & halfMask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t next = left ^ round(r, right);
    left = right;
    right = next;
  }
  return (left << halfBits_) | right;
}

uint64_t FeistelPermutation::decrypt(uint64_t y) const {
  uint64_t left = y >> halfBits_, right = y & halfMask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    const uint64_t previous = right ^ round(r, left);
    right = left;
    left = previous;
  }
  return (left << halfBits_) | right;
}

uint64_t FeistelPermutation::forward(uint64_t x) const {
  do x = encrypt(x);
  while (x >= universe_);
  return x;
}

uint64_t FeistelPermutation::inverse(uint64_t y) const {
  do y = decrypt(y);
  while (y >= universe_);
  return y;
}

}  // namespace spccl::sparse

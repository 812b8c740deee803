// A keyed pseudo-random permutation pi of [0, M) (docs/algorithms.md 2.6,
// 1): a balanced Feistel network on the smallest even bit width 2h with
// 2^(2h) >= M, restricted to [0, M) by cycle-walking (Black and Rogaway,
// "Ciphers with arbitrary finite domains", 2002): apply the network until
// the value lands below M again. Because the network is a bijection of the
// wider domain, walking keeps it a bijection of [0, M); the domain is under
// 4M wide, so a walk takes fewer than 4 steps on average.
#pragma once

#include <array>
#include <cstdint>

namespace spccl::sparse {

class FeistelPermutation {
 public:
  // Four rounds of a pseudo-random round function make a pseudo-random
  // permutation (Luby and Rackoff, 1988); the round keys come from the seed.
  // The round function is multiply-shift hashing (Dietzfelbinger et al.,
  // 1997): the top bits of (half ^ key) * odd multiplier, a universal hash.
  // Balance is what the partition needs, not secrecy, and it costs one
  // multiply where a 64-bit finaliser costs five steps; the pull decodes
  // every received index through this, so it was 9 % of a BP call.
  static constexpr int kRounds = 4;

  FeistelPermutation(uint64_t universe, uint64_t seed);
  uint64_t universe() const { return universe_; }
  // pi(x) and pi^-1(y) for x, y < universe.
  // Defined here so that the partition's per-index loops inline the whole
  // network (out of line, the calls to the rounds were half of its cost).
  uint64_t forward(uint64_t x) const {
    do x = encrypt(x);
    while (x >= universe_);
    return x;
  }
  uint64_t inverse(uint64_t y) const {
    do y = decrypt(y);
    while (y >= universe_);
    return y;
  }

 private:
  uint64_t round(int r, uint64_t half) const {
    return ((half ^ roundKeys_[r]) * roundMultipliers_[r]) >> (64 - halfBits_);
  }
  // (L, R) -> (R, L ^ F_r(R)) per round; decryption runs the rounds
  // backwards.
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> halfBits_, right = x & halfMask_;
    for (int r = 0; r < kRounds; ++r) {
      const uint64_t next = left ^ round(r, right);
      left = right;
      right = next;
    }
    return (left << halfBits_) | right;
  }
  uint64_t decrypt(uint64_t y) const {
    uint64_t left = y >> halfBits_, right = y & halfMask_;
    for (int r = kRounds - 1; r >= 0; --r) {
      const uint64_t previous = right ^ round(r, left);
      right = left;
      left = previous;
    }
    return (left << halfBits_) | right;
  }

  uint64_t universe_;
  int halfBits_;
  uint64_t halfMask_;
  std::array<uint64_t, kRounds> roundKeys_;
  std::array<uint64_t, kRounds> roundMultipliers_;  // odd
};

}  // namespace spccl::sparse

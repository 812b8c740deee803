// A keyed pseudo-random permutation pi of [0, M) (docs/algorithms.md 2.6,
// 1): a balanced Feistel network on the smallest even bit width 2h with
// 2^(2h) >= M, restricted to [0, M) by cycle-walking (Black and Rogaway,
// "Ciphers with arbitrary finite domains", 2002): apply the network until
// the value lands below M again. Because the network is a bijection of the
// wider domain, walking keeps it a bijection of [0, M); the domain is under
// 4M wide, so a walk takes fewer than 4 steps on average.
//
// The network itself is element code shared with the device bucketing
// (kernels/device_sparse/partition_math.h), so both compute the same pi.
#pragma once

#include <cstdint>

#include "kernels/device_sparse/partition_math.h"

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
  static constexpr int kRounds = kernels::device_sparse::kFeistelRounds;

  FeistelPermutation(uint64_t universe, uint64_t seed)
      : keys_(kernels::device_sparse::feistelKeys(universe, seed)) {}
  uint64_t universe() const { return keys_.universe; }
  const kernels::device_sparse::FeistelKeys& keys() const { return keys_; }
  // pi(x) and pi^-1(y) for x, y < universe.
  // Inline, so that the partition's per-index loops inline the whole
  // network (out of line, the calls to the rounds were half of its cost).
  uint64_t forward(uint64_t x) const { return kernels::device_sparse::feistelForward(keys_, x); }
  uint64_t inverse(uint64_t y) const { return kernels::device_sparse::feistelInverse(keys_, y); }

 private:
  kernels::device_sparse::FeistelKeys keys_;
};

}  // namespace spccl::sparse

// The index partitions' math (src/sparse/index_partition.h) as plain
// element code that the CPU's IndexPartition classes and the device
// bucketing (bucket_pairs.h) both run, so an owner or position is computed
// by one source on both sides:
//  - even ranges: part p owns [p*M/n, (p+1)*M/n) (Contiguous over index
//    space, Permutation over pi-space);
//  - the keyed Feistel permutation pi of [0, M) with cycle-walking
//    (docs/algorithms.md 2.6 (1); Black and Rogaway 2002; four rounds of
//    multiply-shift hashing, Luby and Rackoff 1988);
//  - Zen's h0 (kernels/zen_hash.h). ZenHash's position (the rank of idx in
//    I_p, Zen section 3.3) is a count, not a formula: the CPU reads a table
//    it built by counting in one ascending sweep, the device counts per
//    tile of the universe (bucket_pairs.h); both count the same thing.
// A PartitionMath is a POD, passed by value to the kernels.
#pragma once

#include <bit>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/zen_hash.h"

namespace spccl::kernels::device_sparse {

// The values of sparse::PartitionKind.
constexpr uint32_t kZenHashPartition = 1;
constexpr uint32_t kPermutationPartition = 2;
constexpr uint32_t kContiguousPartition = 3;

constexpr int kFeistelRounds = 4;

// A keyed permutation of [0, universe): a balanced Feistel network on the
// smallest even bit width 2h with 2^(2h) >= universe (feistelKeys).
struct FeistelKeys {
  uint64_t universe;
  uint64_t halfBits;
  uint64_t halfMask;
  uint64_t roundKeys[kFeistelRounds];
  uint64_t roundMultipliers[kFeistelRounds];  // odd
};

// The top bits of (half ^ key) * odd multiplier (Dietzfelbinger et al. 1997).
SPCCL_HOST_DEVICE inline uint64_t feistelRound(const FeistelKeys& k, int r, uint64_t half) {
  return ((half ^ k.roundKeys[r]) * k.roundMultipliers[r]) >> (64 - k.halfBits);
}

// (L, R) -> (R, L ^ F_r(R)) per round; decryption runs the rounds backwards.
SPCCL_HOST_DEVICE inline uint64_t feistelEncrypt(const FeistelKeys& k, uint64_t x) {
  uint64_t left = x >> k.halfBits, right = x & k.halfMask;
  for (int r = 0; r < kFeistelRounds; ++r) {
    const uint64_t next = left ^ feistelRound(k, r, right);
    left = right;
    right = next;
  }
  return (left << k.halfBits) | right;
}

SPCCL_HOST_DEVICE inline uint64_t feistelDecrypt(const FeistelKeys& k, uint64_t y) {
  uint64_t left = y >> k.halfBits, right = y & k.halfMask;
  for (int r = kFeistelRounds - 1; r >= 0; --r) {
    const uint64_t previous = right ^ feistelRound(k, r, left);
    right = left;
    left = previous;
  }
  return (left << k.halfBits) | right;
}

// pi(x) and pi^-1(y) for x, y < universe: walk the cycle until the value
// lands in [0, universe) (the domain is under 4x as wide: < 4 steps on
// average).
SPCCL_HOST_DEVICE inline uint64_t feistelForward(const FeistelKeys& k, uint64_t x) {
  do x = feistelEncrypt(k, x);
  while (x >= k.universe);
  return x;
}
SPCCL_HOST_DEVICE inline uint64_t feistelInverse(const FeistelKeys& k, uint64_t y) {
  do y = feistelDecrypt(k, y);
  while (y >= k.universe);
  return y;
}

// The round keys of `seed` for [0, universe).
inline FeistelKeys feistelKeys(uint64_t universe, uint64_t seed) {
  FeistelKeys k{};
  k.universe = universe;
  // Bits to number [0, M), rounded up to even, at least 2 (M = 1 still
  // needs two halves). M - 1 < 2^64, so 2h <= 64.
  const int bits = universe <= 1 ? 1 : static_cast<int>(std::bit_width(universe - 1));
  k.halfBits = static_cast<uint64_t>((bits + 1) / 2);
  k.halfMask = k.halfBits == 32 ? 0xffffffffull : (uint64_t{1} << k.halfBits) - 1;
  uint64_t key = seed;
  for (int r = 0; r < kFeistelRounds; ++r) {
    key = mix64(key + 0x9e3779b97f4a7c15ull);
    k.roundKeys[r] = key;
    k.roundMultipliers[r] = mix64(key ^ 0xc2b2ae3d27d4eb4full) | 1;
  }
  return k;
}

// floor(p * universe / parts) without a 128-bit product: with universe =
// q * parts + r, that is p * q + floor(p * r / parts), and p * r < parts^2
// fits 64 bits for parts < 2^32.
SPCCL_HOST_DEVICE inline uint64_t evenRangeStart(uint64_t universe, uint64_t parts, uint64_t p) {
  return p * (universe / parts) + p * (universe % parts) / parts;
}

// The p with start(p) <= y < start(p + 1), y < M, for ranges whose
// boundaries `start` gives: y * n / M in floating point lands on the right
// part or, through rounding (or a part that begins at a non-integer
// multiple of M/n), next to it.
template <typename Start>
SPCCL_HOST_DEVICE inline int evenRangeOf(uint64_t y, int parts, double partsPerElement,
                                         const Start& start) {
  const int last = parts - 1;
  int p = static_cast<int>(static_cast<double>(y) * partsPerElement);
  if (p > last) p = last;
  while (p > 0 && start(p) > y) --p;
  while (p < last && start(p + 1) <= y) ++p;
  return p;
}

struct PartitionMath {
  uint32_t kind;  // kZenHashPartition, kPermutationPartition or kContiguousPartition
  uint32_t parts;
  uint64_t universe;
  uint64_t seed;           // ZenHash's h0 key
  double partsPerElement;  // parts / universe (evenRangeOf's first guess)
  FeistelKeys feistel;     // Permutation's pi
};

inline PartitionMath partitionMath(uint32_t kind, uint64_t universe, int parts, uint64_t seed) {
  PartitionMath m{};
  m.kind = kind;
  m.parts = static_cast<uint32_t>(parts);
  m.universe = universe;
  m.seed = seed;
  m.partsPerElement =
      universe == 0 ? 0.0 : static_cast<double>(parts) / static_cast<double>(universe);
  if (kind == kPermutationPartition) m.feistel = feistelKeys(universe, seed);
  return m;
}

// Where even ranges split a partition's key space (index or pi-space).
SPCCL_HOST_DEVICE inline int evenRangeOf(const PartitionMath& m, uint64_t y) {
  return evenRangeOf(y, static_cast<int>(m.parts), m.partsPerElement,
                     [&m](int p) { return evenRangeStart(m.universe, m.parts, p); });
}

// The owner of idx < universe.
SPCCL_HOST_DEVICE inline int partitionOwner(const PartitionMath& m, uint64_t idx) {
  if (m.kind == kZenHashPartition) return zenOwner(idx, m.seed, static_cast<int>(m.parts));
  if (m.kind == kPermutationPartition) return evenRangeOf(m, feistelForward(m.feistel, idx));
  return evenRangeOf(m, idx);
}

// Owner and position of idx, for the partitions whose position is a
// formula (Permutation, Contiguous; not ZenHash, see above).
SPCCL_HOST_DEVICE inline void locateByFormula(const PartitionMath& m, uint64_t idx, int* owner,
                                              uint64_t* position) {
  const uint64_t y = m.kind == kPermutationPartition ? feistelForward(m.feistel, idx) : idx;
  *owner = evenRangeOf(m, y);
  *position = y - evenRangeStart(m.universe, m.parts, static_cast<uint64_t>(*owner));
}

}  // namespace spccl::kernels::device_sparse

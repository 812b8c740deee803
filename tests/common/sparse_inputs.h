// The sparse all-reduce's deterministic inputs: which elements of a rank
// are non-zero for a density and overlap pattern, and their values (small
// non-zero integers, |v| <= 3, so every partial sum is exact in every type
// and the correct result is unique whatever the reduction order). Shared by
// tests/integration/sparse_check.cc and tests/gpu/test_gpu_collectives.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spccl::sparse_inputs {

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline double uniform(uint64_t a, uint64_t b) {
  return static_cast<double>(mix(a * 0x100000001b3ull ^ mix(b)) >> 11) * 0x1.0p-53;
}

enum class Overlap { Random, Full, None, Skew, EmptyRanks };
inline const char* overlapName(Overlap o) {
  switch (o) {
    case Overlap::Random:
      return "random";
    case Overlap::Full:
      return "full-overlap";
    case Overlap::None:
      return "no-overlap";
    case Overlap::Skew:
      return "skewed";
    default:
      return "empty-ranks";
  }
}

inline bool isNonZero(Overlap overlap, double density, size_t i, int rank, int nranks,
                      size_t count) {
  switch (overlap) {
    case Overlap::Random:
      return uniform(i, static_cast<uint64_t>(rank) + 1) < density;
    case Overlap::Full:
      return uniform(i, 0) < density;
    case Overlap::None:
      return static_cast<int>(i % static_cast<size_t>(nranks)) == rank &&
             uniform(i, 0) < density * nranks;
    case Overlap::Skew:  // everything in the first 5 % of the tensor
      return i < count / 20 && uniform(i, static_cast<uint64_t>(rank) + 1) < density * 20;
    default:
      return rank % 2 == 0 && uniform(i, static_cast<uint64_t>(rank) + 1) < density;
  }
}

inline int smallValue(size_t i, int rank) {
  const uint64_t h = mix(i * 31 + static_cast<uint64_t>(rank));
  const int magnitude = static_cast<int>(h % 3) + 1;
  return (h >> 8) & 1 ? magnitude : -magnitude;
}

}  // namespace spccl::sparse_inputs

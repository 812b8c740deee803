// The chaos and soak drivers' inputs and references: every rank's input of
// a step is a pure function of (step, the rank's rank in the job it
// started in), so a survivor computes the exact reference of any step for
// any membership on its own, before and after a shrink.
//
// Dense and sparse inputs are small integers (|x| <= 3 per rank), so every
// partial sum is exact in f32 whatever the reduction order: a result is
// right only if it equals the reference bit for bit. Compressed inputs are
// uniform in [-1, 1); a result is right when every element is within the
// bound of docs/compressed.md ("Error bound", two-shot schedule).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl::chaos {

enum class Kind { Dense, Sparse, Compressed };
constexpr int kNumKinds = 3;
inline const char* kindName(Kind k) {
  return k == Kind::Dense ? "dense" : k == Kind::Sparse ? "sparse" : "compressed";
}

// splitmix64 of the coordinates: the same value on every process that asks.
inline uint64_t mix(uint64_t step, uint64_t jobRank, uint64_t index, uint64_t salt) {
  uint64_t z = step * 0x9e3779b97f4a7c15ull ^ (jobRank + 1) * 0xbf58476d1ce4e5b9ull ^
               index * 0x94d049bb133111ebull ^ salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline float denseValue(long step, int jobRank, size_t i) {
  return static_cast<float>(static_cast<int>(mix(step, jobRank, i, 1) % 7) - 3);
}

// About 2 % of the elements are non-zero on each rank, +-1..3.
inline float sparseValue(long step, int jobRank, size_t i) {
  const uint64_t m = mix(step, jobRank, i, 2);
  if (m % 100 >= 2) return 0.0f;
  const float magnitude = static_cast<float>(1 + (m >> 8) % 3);
  return (m >> 16) & 1 ? magnitude : -magnitude;
}

inline float compressedValue(long step, int jobRank, size_t i) {
  return static_cast<float>(static_cast<double>(mix(step, jobRank, i, 3) >> 11) * 0x1.0p-52 - 1.0);
}

inline float inputValue(Kind kind, long step, int jobRank, size_t i) {
  switch (kind) {
    case Kind::Dense:
      return denseValue(step, jobRank, i);
    case Kind::Sparse:
      return sparseValue(step, jobRank, i);
    default:
      return compressedValue(step, jobRank, i);
  }
}

inline std::vector<float> input(Kind kind, long step, int jobRank, size_t count) {
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = inputValue(kind, step, jobRank, i);
  return x;
}

// The compressed call every driver makes: 4-bit piecewise, two-shot.
inline spcclCompression compression() {
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.codec = spcclCodecPiecewise;
  cfg.bits = 4;
  cfg.blockSize = SPCCL_COMPRESSION_DEFAULT_BLOCK;
  cfg.schedule = spcclCompressTwoShot;
  return cfg;
}

// Elements of `out` that are wrong for the members' (job ranks') inputs:
// dense and sparse exactly, compressed beyond h(2 + h) A_b plus f32
// rounding 1e-5 n A_b (docs/compressed.md; h = 0.5 / (bits - 1) for the
// piecewise codec).
inline size_t countWrong(Kind kind, long step, const std::vector<int>& members,
                         const std::vector<float>& out) {
  const size_t count = out.size();
  size_t wrong = 0;
  if (kind != Kind::Compressed) {
    for (size_t i = 0; i < count; ++i) {
      float sum = 0.0f;
      for (int r : members) sum += inputValue(kind, step, r, i);
      if (out[i] != sum) ++wrong;
    }
    return wrong;
  }
  const spcclCompression cfg = compression();
  const double h = 0.5 / (cfg.bits - 1);
  const size_t block = cfg.blockSize;
  const double n = static_cast<double>(members.size());
  std::vector<double> exact(block);
  for (size_t begin = 0; begin < count; begin += block) {
    const size_t end = std::min(count, begin + block);
    double scaleSum = 0.0;  // A_b: the sum over ranks of each rank's block maximum
    std::fill(exact.begin(), exact.end(), 0.0);
    for (int r : members) {
      double maxAbs = 0.0;
      for (size_t i = begin; i < end; ++i) {
        const double v = compressedValue(step, r, i);
        exact[i - begin] += v;
        maxAbs = std::max(maxAbs, std::fabs(v));
      }
      scaleSum += maxAbs;
    }
    const double bound = h * (2.0 + h) * scaleSum + 1e-5 * n * scaleSum;
    for (size_t i = begin; i < end; ++i)
      if (!(std::fabs(out[i] - exact[i - begin]) <= bound)) ++wrong;
  }
  return wrong;
}

}  // namespace spccl::chaos

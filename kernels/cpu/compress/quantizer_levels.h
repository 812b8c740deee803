// The magnitude half of the two codecs (kernels.h): x = |v|/m in [0, 1] to
// an N-bit code, and the code's level back, both normalised by the block
// scale m. The codecs differ only here; signs, scales and packing are
// shared (quantize_cpu.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/kernels.h"

namespace spccl::kernels {

// Piecewise quantization, AccTFM Eq. (6)-(12). With t = xN (Eq. 9 scaled):
// cluster k = min(floor(t), N-1), whose left boundary C_k = k m/N (Eq. 7)
// is code base[k] = 2^N - 2^(N-k) (the intervals of clusters 0..k-1,
// Eq. 11's partial sum), and whose interval U_k = U_0 2^k (Eq. 8, 12) is
// 1/(2^(N-1-k)) of the cluster width, so (v - C_k)/U_k = (t - k) 2^(N-1-k).
struct PiecewiseMagnitude {
  int n = 1;
  float clustersPerUnit = 1;                 // N
  std::array<float, 8> intervalsPerCluster;  // 2^(N-1-k)
  std::array<float, 8> clusterBase;          // 2^N - 2^(N-k)

  explicit PiecewiseMagnitude(int magnitudeBits) : n(magnitudeBits), clustersPerUnit(n) {
    for (int k = 0; k < 8; ++k) {
      const int kk = std::min(k, n - 1);
      intervalsPerCluster[k] = static_cast<float>(1 << (n - 1 - kk));
      clusterBase[k] = static_cast<float>((1 << n) - (1 << (n - kk)));
    }
  }
  // x in [0, 1] (callers clamp).
  SPCCL_HOST_DEVICE uint32_t code(float x) const {
    const float t = x * clustersPerUnit;
    const int k = std::min(static_cast<int>(t), n - 1);
    const float within = (t - static_cast<float>(k)) * intervalsPerCluster[k];
    // Half up (within >= 0); the CUDA kernels share this code, and
    // magnitude_lanes.h matches it bit for bit.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const int rounded = static_cast<int>(within + 0.5f);
    return static_cast<uint32_t>(clusterBase[k] + static_cast<float>(rounded));
  }
  // The level of code c as a fraction of m: C_k/m + (c - base[k]) U_k/m.
  double level(uint32_t c) const {
    int k = 0;
    while (k + 1 < n && clusterBase[k + 1] <= static_cast<float>(c)) ++k;
    const double unit = 1.0 / (n * static_cast<double>(1 << (n - 1)));  // U_0/m, Eq. (12)
    return static_cast<double>(k) / n + (c - clusterBase[k]) * unit * (1 << k);
  }
};

// Linear quantization, AccTFM Eq. (4)-(5): step = m/(2^(bits-1) - 1).
struct LinearMagnitude {
  float steps = 1;  // 2^N - 1

  explicit LinearMagnitude(int magnitudeBits)
      : steps(static_cast<float>((1 << magnitudeBits) - 1)) {}
  // Half up (x >= 0); shared with the CUDA kernels, matched by magnitude_lanes.h.
  SPCCL_HOST_DEVICE uint32_t code(float x) const {
    return static_cast<uint32_t>(x * steps + 0.5f);  // NOLINT(bugprone-incorrect-roundings)
  }
  double level(uint32_t c) const { return c / static_cast<double>(steps); }
};

// Signed levels of every code of a spec: table[sign << N | magnitude].
template <typename Magnitude>
std::array<float, 256> signedLevels(const Magnitude& magnitude, int bits) {
  std::array<float, 256> table{};
  const int n = bits - 1;
  for (uint32_t c = 0; c < (1u << n); ++c) {
    const float level = static_cast<float>(magnitude.level(c));
    table[c] = level;
    table[c | (1u << n)] = -level;
  }
  return table;
}

}  // namespace spccl::kernels

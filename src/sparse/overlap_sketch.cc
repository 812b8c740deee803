#include "sparse/overlap_sketch.h"

#include <algorithm>
#include <vector>

#include "sparse/index_partition.h"

namespace spccl::sparse {

namespace {
// A key of its own, so the sketch's hash is independent of h0's.
constexpr uint64_t kSketchKey = 0x6b6d765f736b7463ull;
}  // namespace

OverlapSketch sketchIndices(const uint64_t* indices, size_t nnz, uint64_t seed) {
  std::vector<uint64_t> hashes(nnz);
  for (size_t i = 0; i < nnz; ++i) hashes[i] = mix64(indices[i] ^ seed ^ kSketchKey);
  OverlapSketch sketch;
  sketch.count = std::min(nnz, kSketchSize);
  std::partial_sort(hashes.begin(), hashes.begin() + static_cast<ptrdiff_t>(sketch.count),
                    hashes.end());
  std::copy(hashes.begin(), hashes.begin() + static_cast<ptrdiff_t>(sketch.count), sketch.hashes);
  return sketch;
}

double estimateUnionSize(std::span<const OverlapSketch> sketches, std::span<const uint64_t> sizes) {
  std::vector<uint64_t> all;
  bool complete = true;  // every set fits its sketch: the union is counted exactly
  for (size_t r = 0; r < sketches.size(); ++r) {
    // A peer's sketch arrives as bytes: its count is at most kSketchSize
    // only if the peer says so truthfully.
    const size_t count = std::min<uint64_t>(sketches[r].count, kSketchSize);
    all.insert(all.end(), sketches[r].hashes, sketches[r].hashes + count);
    if (sizes[r] > count) complete = false;
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  if (complete || all.size() < kSketchSize) return static_cast<double>(all.size());
  // The k-th smallest of the union's hashes, as a fraction of the range.
  const double kth = (static_cast<double>(all[kSketchSize - 1]) + 1.0) / 18446744073709551616.0;
  return static_cast<double>(kSketchSize - 1) / kth;
}

}  // namespace spccl::sparse

// A k-minimum-values sketch of a rank's index set (Bar-Yossef et al.), so
// that the first call for a tag can estimate gamma before any output has
// been seen: the union of n sets' sketches is the sketch of the union, and
// the k-th smallest hash estimates the number of distinct indices. Later
// calls learn gamma exactly from the output size (planner.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace spccl::sparse {

constexpr size_t kSketchSize = 32;

struct OverlapSketch {
  uint64_t count = 0;                 // valid entries (= min(nnz, kSketchSize))
  uint64_t hashes[kSketchSize] = {};  // ascending
};

// The kSketchSize smallest keyed hashes of the indices.
OverlapSketch sketchIndices(const uint64_t* indices, size_t nnz, uint64_t seed);

// Estimated number of distinct indices in the union of the sets whose
// sketches (and sizes) are given.
double estimateUnionSize(std::span<const OverlapSketch> sketches, std::span<const uint64_t> sizes);

}  // namespace spccl::sparse

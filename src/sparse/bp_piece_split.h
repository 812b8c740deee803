// Cuts Balanced Parallelism's push buckets into pieces (bp_pipeline.cc):
// piece k of owner p is the contiguous range [start(k), start(k+1)) of its
// positions I_p (EvenRanges over |I_p|), the same on every rank, so the
// owner can sum piece k while piece k+1 is on the wire. Only a split,
// not a sort: each piece is sorted just before it is encoded, so that
// sorting piece k+1 runs while piece k is sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sparse/bucketing.h"
#include "sparse/even_ranges.h"

namespace spccl::sparse::bp {

// Where each piece of each bucket lies after splitPieces: piece k of
// bucket p is pairs [begin(p, k), begin(p, k + 1)), and begin(p, pieces)
// is begin(p + 1, 0).
struct PieceCuts {
  int pieces = 1;
  std::vector<size_t> starts;  // parts * pieces + 1 entries
  size_t begin(int p, int k) const {
    return starts[static_cast<size_t>(p) * static_cast<size_t>(pieces) + static_cast<size_t>(k)];
  }
  size_t count(int p, int k) const { return begin(p, k + 1) - begin(p, k); }
};

// Reorders every bucket of *buckets (bucket p's positions < ranges[p]'s
// universe) piece by piece, stably, and makes each position relative to
// its piece's start. ranges: one per owner, all with cuts->pieces parts.
// The scratch vectors (any contents) are swapped with the buckets' arrays.
void splitPieces(std::span<const EvenRanges> ranges, size_t valueBytes, Buckets* buckets,
                 std::vector<uint64_t>* scratchPositions, std::vector<unsigned char>* scratchValues,
                 PieceCuts* cuts);

}  // namespace spccl::sparse::bp

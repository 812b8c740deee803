// Deterministic sparse inputs for the sparse all-reduce benchmark: which
// elements of a rank's dense buffer are non-zero, and their values.
//
// The unit of sparsity is a row of `rowWidth` consecutive elements (1: single
// elements, as in a gradient; > 1: embedding rows, whole rows non-zero).
// Each rank's rows come in two parts (docs/benchmarking.md, "Side by side": "half from a pool
// shared by all ranks and half private"; the Gloo peer,
// tests/netns/peers/gloo_allreduce.py, draws the same way):
//  - shared: `overlap` of the rank's rows, a random subset of a pool of
//    twice that many rows that every rank draws identically, so ranks
//    overlap in part, not fully;
//  - private: the rest, drawn by the rank alone from outside the pool
//    (near full density, where that leaves too little room, the rank takes
//    more from the pool instead: the density is kept, not the overlap).
// Rows are drawn uniformly, or (zipfExponent > 0) without replacement with
// weights (row + 1)^-s, so low row ids are hot as in a frequency-sorted
// vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

struct SparseWorkloadSpec {
  double density = 0.01;      // target fraction of non-zero elements per rank
  double overlap = 0.5;       // fraction of a rank's rows from the shared pool
  double zipfExponent = 0.0;  // 0: uniform rows
  size_t rowWidth = 1;
  uint64_t seed = 1;
};

// The values every generated non-zero takes: small integers, so that a sum
// over up to 31 ranks is exact in every type (int8 included) and the
// sparse result can be compared bitwise with the dense all-reduce.
constexpr int kMaxInputValue = 4;

// Ascending, distinct element indices in [0, count) that are non-zero on
// `rank`. The same arguments give the same indices on any machine.
std::vector<uint64_t> sparseNonZeroIndices(const SparseWorkloadSpec& spec, size_t count, int rank);

// The value (1..kMaxInputValue) of element `index` on `rank`.
int sparseInputValue(uint64_t seed, int rank, uint64_t index);

// Writes rank's dense input, zeros included, into buffer (count elements
// of `type`). Returns the number of non-zero elements.
size_t fillSparseInput(const SparseWorkloadSpec& spec, size_t count, int rank, spcclDataType_t type,
                       void* buffer);

}  // namespace spccl::perf

// Writes Balanced Parallelism's pulled partitions into the dense output
// when each arrived sorted by global index (the owner sent global indices,
// balanced_parallelism.cc): one sequential pass over the output, block by
// block, each block cleared and filled from every part's cursor while it
// sits in L1. Before, every rank inverted the keyed permutation of every
// pulled pair and scattered it at random over the whole output, after a
// separate clearing pass (the largest part of a 1 % call at n = 8).
#pragma once

#include <cstddef>
#include <span>

#include "sparse/sparse_set.h"

namespace spccl::sparse::bp {

// dense: count values of valueBytes; parts: disjoint sets, each ascending,
// every position < count. Positions no part holds are zero.
void densifySortedParts(size_t valueBytes, std::span<const SparseSet* const> parts, void* dense,
                        size_t count);

}  // namespace spccl::sparse::bp

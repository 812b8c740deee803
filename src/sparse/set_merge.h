// The union of two sparse sets with their common positions summed: the
// incremental aggregation step of Hierarchical Centralization (Zen Def. 7)
// and of Balanced Parallelism's owner when its parts are sparse.
#pragma once

#include <cstddef>

#include "kernels/sparse_kernels.h"
#include "sparse/sparse_messages.h"
#include "spccl.h"

namespace spccl::sparse {

// *out = lower U higher, positions ascending; where both hold a position,
// lower + higher as the dense reduce kernel adds (kernels::mergeSum, so
// f16/bf16 round once per element as the dense kernels do).
// The order of the operands is part of the result's bits: callers pass the
// data of lower ranks as `lower`. *out must not alias either input.
void mergeSets(spcclDataType_t type, size_t valueBytes, const kernels::SortedPairs& lower,
               const kernels::SortedPairs& higher, SparseSet* out);
inline kernels::SortedPairs pairsOf(const SparseSet& set) {
  return {set.positions.data(), set.values.data(), set.size()};
}
inline void mergeSets(spcclDataType_t type, size_t valueBytes, const SparseSet& lower,
                      const SparseSet& higher, SparseSet* out) {
  mergeSets(type, valueBytes, pairsOf(lower), pairsOf(higher), out);
}

// Removes the pairs whose value is zero (a sum x + -x), keeping the order.
void dropZeros(spcclDataType_t type, size_t valueBytes, SparseSet* set);

}  // namespace spccl::sparse

// mergeSets and dropZeros (set_merge.h).
#include "sparse/set_merge.h"

#include <cstring>
#include <vector>

#include "kernels/sparse_kernels.h"

namespace spccl::sparse {

void mergeSets(spcclDataType_t type, size_t valueBytes, const kernels::SortedPairs& lower,
               const kernels::SortedPairs& higher, SparseSet* out) {
  const size_t bound = lower.count + higher.count;
  out->positions.resize(bound);
  out->values.resize(bound * valueBytes);
  const size_t merged =
      kernels::mergeSum(type, lower, higher, out->positions.data(), out->values.data());
  out->positions.resize(merged);
  out->values.resize(merged * valueBytes);
}

void dropZeros(spcclDataType_t type, size_t valueBytes, SparseSet* set) {
  const size_t size = set->size();
  std::vector<uint64_t> kept(size);
  std::vector<unsigned char> values(size * valueBytes);
  const size_t nnz =
      kernels::extractNonZeros(type, set->values.data(), size, kept.data(), values.data(), size);
  if (nnz == size) return;
  for (size_t i = 0; i < nnz; ++i) set->positions[i] = set->positions[kept[i]];
  set->positions.resize(nnz);
  values.resize(nnz * valueBytes);
  set->values = std::move(values);
}

}  // namespace spccl::sparse

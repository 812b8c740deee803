// Exact two-pass bucketing (docs/algorithms.md 2.6 (3)): count per owner,
// prefix sum, scatter. Stable: a bucket keeps the input order.
#include <vector>

#include "sparse/bucketing_methods.h"
#include "sparse/value_copy.h"

namespace spccl::sparse {

void twoPassBucketing(const IndexPartition& partition, size_t valueBytes, const uint64_t* indices,
                      const void* values, size_t nnz, Buckets* out) {
  const size_t parts = static_cast<size_t>(partition.parts());
  std::vector<int>& owners = out->owners;
  std::vector<uint64_t>& positions = out->located;
  owners.resize(nnz);
  positions.resize(nnz);
  partition.locate(indices, nnz, owners.data(), positions.data());
  out->offsets.assign(parts + 1, 0);
  for (size_t i = 0; i < nnz; ++i) ++out->offsets[static_cast<size_t>(owners[i]) + 1];
  for (size_t p = 0; p < parts; ++p) out->offsets[p + 1] += out->offsets[p];

  out->positions.resize(nnz);
  out->values.resize(nnz * valueBytes);
  out->rehashed = out->serialWrites = out->serialGrowths = 0;
  std::vector<size_t> cursor(out->offsets.begin(), out->offsets.end() - 1);
  const auto* in = static_cast<const unsigned char*>(values);
  for (size_t i = 0; i < nnz; ++i) {
    const size_t slot = cursor[static_cast<size_t>(owners[i])]++;
    out->positions[slot] = positions[i];
    copyValue(&out->values[slot * valueBytes], in + i * valueBytes, valueBytes);
  }
}

}  // namespace spccl::sparse

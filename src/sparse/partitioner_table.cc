#include "sparse/partitioner_table.h"

#include <iterator>

namespace spccl::sparse {

namespace {

// One row per enumerator, in their order.
const SparsePartitionerInfo kPartitioners[] = {
    {spcclPartitionAuto, "auto", "the default: keyed permutation, exact bucketing",
     PartitionKind::Permutation, BucketMethod::TwoPass},
    {spcclPartitionZenHash, "zen-hash",
     "Zen as published: h0 ownership, hierarchical hashing (Algorithm 1)", PartitionKind::ZenHash,
     BucketMethod::HierarchicalHash},
    {spcclPartitionPermutation, "permutation",
     "keyed permutation, contiguous ranges (docs/algorithms.md 2.6 (1)), exact bucketing (2.6 (3))",
     PartitionKind::Permutation, BucketMethod::TwoPass},
    {spcclPartitionTwoPass, "two-pass",
     "h0 ownership, exact count / prefix-sum / scatter bucketing (docs/algorithms.md 2.6 (3))",
     PartitionKind::ZenHash, BucketMethod::TwoPass},
};
static_assert(std::size(kPartitioners) == spcclNumPartitioners);

const SparsePartitionerInfo* find(spcclSparsePartitioner_t partitioner) {
  for (const SparsePartitionerInfo& p : kPartitioners)
    if (p.id == partitioner) return &p;
  return nullptr;
}

}  // namespace

std::span<const SparsePartitionerInfo> sparsePartitioners() { return kPartitioners; }

const SparsePartitionerInfo& sparsePartitioner(spcclSparsePartitioner_t partitioner) {
  const SparsePartitionerInfo* info = find(partitioner);
  return info != nullptr ? *info : kPartitioners[0];
}

const char* sparsePartitionerName(spcclSparsePartitioner_t partitioner) {
  const SparsePartitionerInfo* info = find(partitioner);
  return info != nullptr ? info->name : "unknown";
}

}  // namespace spccl::sparse

// What the partition tests iterate over (test_sparse_partition.cc,
// test_sparse_bucketing.cc,
// test_device_partition_math.cc): every IndexPartition kind, and an
// (M, n, seed) shape.
#pragma once

#include <cstdint>

#include "sparse/index_partition.h"

namespace spccl::sparse {

inline constexpr PartitionKind kAllKinds[] = {PartitionKind::ZenHash, PartitionKind::Permutation,
                                              PartitionKind::Contiguous};

struct Shape {
  uint64_t universe;
  int parts;
  uint64_t seed;
};

}  // namespace spccl::sparse

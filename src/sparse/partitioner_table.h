// Every spcclSparsePartitioner_t, registered once: its name (the perf
// binaries' -P flag, spcclSparsePartitionerName) and what it means to the
// schedules, an ownership of indices and a way to bucket them by owner.
#pragma once

#include <span>

#include "sparse/bucketing.h"
#include "sparse/index_partition.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparsePartitionerInfo {
  spcclSparsePartitioner_t id;
  const char* name;
  const char* description;
  PartitionKind partition;
  BucketMethod bucketing;
};

// Every enumerator, Auto (the default's meaning) included.
std::span<const SparsePartitionerInfo> sparsePartitioners();
// The row of `partitioner`; Auto's for a value without one.
const SparsePartitionerInfo& sparsePartitioner(spcclSparsePartitioner_t partitioner);
// "auto", "zen-hash", ...; "unknown" for a value without a row.
const char* sparsePartitionerName(spcclSparsePartitioner_t partitioner);

}  // namespace spccl::sparse

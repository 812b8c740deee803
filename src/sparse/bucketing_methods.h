// The two bucketing methods behind bucketByOwner() (bucketing.h), with the
// knobs of Zen's hierarchical hashing exposed for tests and benchmarks:
// tiny tables force collisions and serial-memory growth, and two threads
// exercise the atomics.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sparse/bucketing.h"
#include "sparse/index_partition.h"

namespace spccl::sparse {

struct HierarchicalHashOptions {
  // Zen section 4.2: k = 3, r1 = 2*|G|*d (here per partition: twice the
  // indices expected to land in it), r2 = r1/10.
  static constexpr int kHashes = 3;
  double slotsPerExpectedIndex = 2.0;
  uint64_t minParallelSlots = 8;
  uint64_t serialDivisor = 10;
  uint64_t fixedParallelSlots = 0;  // when > 0: r1 of every partition (tests)
  uint64_t fixedSerialSlots = 0;    // when > 0: initial r2 of every partition (tests)
  // Seeds of h1..hk. Zen lets every worker pick its own second-level
  // hashes (technique #3): they never decide an owner, only a slot.
  uint64_t secondLevelSeed = 0x5eed5eed5eed5eedull;
  int threads = 1;  // writers over disjoint slices of the input
};

// h_i(idx) in [0, slots) for i in 1..kHashes (kernels/zen_hash.h, shared
// with the CUDA kernels).
using kernels::secondLevelSlot;

void hierarchicalHashBucketing(const IndexPartition& partition, size_t valueBytes,
                               const uint64_t* indices, const void* values, size_t nnz,
                               const HierarchicalHashOptions& options, Buckets* out);

void twoPassBucketing(const IndexPartition& partition, size_t valueBytes, const uint64_t* indices,
                      const void* values, size_t nnz, Buckets* out);

}  // namespace spccl::sparse

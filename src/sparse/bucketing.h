// Splits one rank's non-zeros into per-owner buckets of (position, value),
// positions as defined by an IndexPartition. Two methods, same result set
// (the order inside a bucket may differ; consumers must not depend on it):
//  - HierarchicalHash: Zen Algorithm 1 — per partition a parallel memory of
//    r1 slots (Zen section 4.2: r1 = 2*|G|*d; k = 3 second-level hashes
//    h1..h3 with their own seeds) and a serial memory of r2 = r1/10 filled through an atomic
//    counter; a read-after-write check detects two writers racing for a slot
//    (technique #4). When the serial memory fills it grows and the spilled
//    indices are placed again: an index is never dropped. Slot emptiness is
//    a separate occupancy mark, never index 0 (a public reproduction used 0
//    as the empty marker and doubled index 0).
//  - TwoPass: count per owner, prefix sum, scatter (exact; docs/algorithms.md 2.6 (3)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sparse/index_partition.h"
#include "spccl.h"

namespace spccl::sparse {

enum class BucketMethod : uint8_t { HierarchicalHash = 1, TwoPass = 2 };

struct Buckets {
  std::vector<size_t> offsets;      // parts + 1 entries; bucket p is [offsets[p], offsets[p+1])
  std::vector<uint64_t> positions;  // position within the owner's set
  std::vector<unsigned char> values;
  // Statistics of the last bucketing (Zen's hashing): indices that needed a
  // rehash, that went to serial memory, serial-memory growths.
  uint64_t rehashed = 0, serialWrites = 0, serialGrowths = 0;
  // TwoPass's scratch: each index's owner and position (kept with the
  // buckets so that a reused Buckets reuses them too).
  std::vector<int> owners;
  std::vector<uint64_t> located;
};

// Buckets made elsewhere in place of bucketByOwner's: the device sparse
// call's (sparse/device_buckets.h), from the pairs it extracted on the GPU.
// Only Balanced Parallelism asks (SparseInput::bucketer).
class PairBucketer {
 public:
  virtual ~PairBucketer() = default;
  // The call's own pairs (SparseInput's, the same set) by owner of
  // `partition` into *out (offsets, positions, values); *sorted: every
  // bucket is ascending by position already. false: it made none (it
  // keeps why), and the caller buckets the pairs with bucketByOwner.
  virtual bool bucket(const IndexPartition& partition, Buckets* out, bool* sorted) = 0;
};

// indices: unique, any order, each < partition.universe().
void bucketByOwner(BucketMethod method, const IndexPartition& partition, spcclDataType_t type,
                   const uint64_t* indices, const void* values, size_t nnz, Buckets* out);

}  // namespace spccl::sparse

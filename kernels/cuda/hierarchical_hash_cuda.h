// Zen's hierarchical hashing (Algorithm 1, section 3.2; docs/algorithms.md 2)
// on the GPU: the bucketing of a rank's non-zero indices by owner that
// src/sparse/hierarchical_hashing.cc does on the CPU, with real atomics.
//
// h0 picks the partition: Zen's hash (sparse::zenOwner) unless the caller
// passes each entry's owner (any IndexPartition). Inside partition p,
// h1..h3 (sparse::secondLevelSlot) try three slots of its parallel memory
// of r1 slots; the loser of every try goes on, and after three failures the
// entry takes the next slot of p's serial memory (r2 slots) from an atomic
// counter. A slot is claimed by an atomic exchange of its occupancy mark,
// and the ordinal written there is read back (technique #4) as the paper
// checks. Nothing is ever dropped: when a serial memory overflows (its
// counter ran past r2), r2 doubles until the count fits and the round is
// run again from empty memories, so a result always holds every entry.
//
// The buckets come out as ordinals (positions in the input): per partition
// its parallel memory in slot order, then its serial memory in counter
// order, as on the CPU. Which entries land in serial memory, and so the
// order inside a bucket, depends on the races; the set of each bucket does
// not (bucketing.h: consumers must not depend on the order).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spccl::kernels::cuda {

struct HierarchicalHashLayout {
  int parts = 1;
  uint64_t partitionSeed = 0;                        // h0's seed, when owners are not given
  uint64_t secondLevelSeed = 0x5eed5eed5eed5eedull;  // h1..h3 (HierarchicalHashOptions)
  std::vector<uint64_t> parallelSlots;               // r1 of each partition, >= 1
  std::vector<uint64_t> serialSlots;                 // initial r2 of each partition, >= 1
};

struct HierarchicalHashResult {
  std::vector<size_t> offsets;  // parts + 1: bucket p is ordinals[offsets[p], offsets[p+1])
  // Of the final round, as sparse::Buckets counts them: entries whose first
  // slot was taken, entries that went to serial memory; and the doublings
  // of serial memories over all rounds.
  uint64_t rehashed = 0, serialWrites = 0, serialGrowths = 0;
  int rounds = 0;
};

// indices (device, nnz entries): unique. owners (device, optional): the
// partition of each entry, < parts; nullptr means zenOwner(index,
// partitionSeed, parts). ordinals (device, nnz entries) gets the buckets.
// Synchronises `stream` (the serial counters decide whether to grow).
cudaError_t hierarchicalHashBucketing(const HierarchicalHashLayout& layout, const uint64_t* indices,
                                      const int* owners, size_t nnz, uint64_t* ordinals,
                                      HierarchicalHashResult* result, cudaStream_t stream);

}  // namespace spccl::kernels::cuda

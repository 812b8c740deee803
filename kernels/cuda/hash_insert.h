// The per-entry work of the CUDA hierarchical hashing
// (hierarchical_hash_cuda.cu), as host-and-device functions, with the
// host-side bookkeeping of its rounds. The kernel runs insertEntry() with
// one thread per entry and the device's atomics; tests/gpu runs it on the
// CPU one entry after another (std::atomic_ref), where the result must be
// the CPU's single-threaded hashing exactly, placement for placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/hierarchical_hash_cuda.h"
#include "kernels/host_device.h"
#include "kernels/zen_hash.h"

#if !defined(__CUDA_ARCH__)
#include <atomic>
#endif

namespace spccl::kernels::cuda {

constexpr int kHashes = 3;  // k of Zen section 4.2 (sparse::HierarchicalHashOptions::kHashes)

// Partition p owns the region [regionStart[p], regionStart[p + 1]): its
// r1 = parallelSlots[p] parallel slots, then its r2 = serialSlots[p]
// serial slots.
struct HashTables {
  const uint64_t* regionStart;  // parts + 1
  const uint64_t* parallelSlots;
  const uint64_t* serialSlots;
};

struct HashMemory {
  uint64_t* slots;                  // ordinals
  unsigned* occupied;               // marks
  unsigned long long* serialCount;  // one counter per partition
};

struct InsertCounts {
  unsigned long long rehashed = 0, serialWrites = 0;
};

SPCCL_HOST_DEVICE inline unsigned exchangeMark(unsigned* mark) {
#if defined(__CUDA_ARCH__)
  return atomicExch(mark, 1u);
#else
  return std::atomic_ref<unsigned>(*mark).exchange(1u);
#endif
}

SPCCL_HOST_DEVICE inline unsigned long long takeSerialSlot(unsigned long long* counter) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(counter, 1ull);
#else
  return std::atomic_ref<unsigned long long>(*counter).fetch_add(1);
#endif
}

// Algorithm 1, line 17 and technique #4: a slot already marked is a
// collision; so is losing the exchange to a concurrent writer; the winner
// writes its ordinal and reads it back.
SPCCL_HOST_DEVICE inline bool claimSlot(const HashMemory& memory, uint64_t q, uint64_t ordinal) {
  if (*const_cast<volatile unsigned*>(&memory.occupied[q]) != 0) return false;
  if (exchangeMark(&memory.occupied[q]) != 0) return false;
  volatile uint64_t* slot = &memory.slots[q];
  *slot = ordinal;
  return *slot == ordinal;
}

// Algorithm 1, lines 7-16, for the entry `ordinal` (index idx, partition p).
SPCCL_HOST_DEVICE inline void insertEntry(const HashTables& tables, const HashMemory& memory,
                                          uint64_t idx, int p, uint64_t ordinal,
                                          uint64_t secondLevelSeed, InsertCounts* counts) {
  const uint64_t region = tables.regionStart[p];
  const uint64_t r1 = tables.parallelSlots[p];
  for (int i = 1; i <= kHashes; ++i) {
    if (i == 2) ++counts->rehashed;
    if (claimSlot(memory, region + secondLevelSlot(i, idx, secondLevelSeed, r1), ordinal)) return;
  }
  ++counts->serialWrites;
  const unsigned long long q = takeSerialSlot(&memory.serialCount[p]);
  if (q < tables.serialSlots[p]) {  // else only counted: the round reruns with more room
    memory.slots[region + r1 + q] = ordinal;
    memory.occupied[region + r1 + q] = 1;
  }
}

// The tables of a round, in one host array: regionStart (parts + 1), then
// r1 (parts), then r2 (parts).
inline std::vector<uint64_t> hashTablesFor(const HierarchicalHashLayout& layout,
                                           const std::vector<uint64_t>& serialSlots) {
  const size_t parts = static_cast<size_t>(layout.parts);
  std::vector<uint64_t> tables(3 * parts + 1, 0);
  for (size_t p = 0; p < parts; ++p) {
    tables[p + 1] = tables[p] + layout.parallelSlots[p] + serialSlots[p];
    tables[parts + 1 + p] = layout.parallelSlots[p];
    tables[2 * parts + 1 + p] = serialSlots[p];
  }
  return tables;
}

inline HashTables hashTablesView(const uint64_t* tables, size_t parts) {
  return HashTables{tables, tables + parts + 1, tables + 2 * parts + 1};
}

// After a round: doubles every serial memory whose counter ran past it until
// the count fits (the CPU's growth, hierarchical_hashing.cc), counting the
// doublings; false when nothing overflowed and the round stands.
inline bool growSerialMemories(const std::vector<unsigned long long>& serialCounts,
                               std::vector<uint64_t>* serialSlots, uint64_t* growths) {
  bool grew = false;
  for (size_t p = 0; p < serialSlots->size(); ++p) {
    for (; (*serialSlots)[p] < serialCounts[p]; (*serialSlots)[p] *= 2, grew = true) ++*growths;
  }
  return grew;
}

}  // namespace spccl::kernels::cuda

// h0 (mix64) and makePartition(), which caches the ZenHash tables per
// (M, n, seed) for the life of the process (index_partition.h).
#include "sparse/index_partition.h"

#include <map>
#include <mutex>
#include <tuple>

#include "base/log.h"
#include "sparse/partition_kinds.h"

namespace spccl::sparse {

void IndexPartition::indices(int p, const uint64_t* positions, size_t count, uint64_t* out) const {
  for (size_t i = 0; i < count; ++i) out[i] = index(p, positions[i]);
}

void IndexPartition::locate(const uint64_t* indices, size_t count, int* owners,
                            uint64_t* positions) const {
  for (size_t i = 0; i < count; ++i) {
    owners[i] = owner(indices[i]);
    positions[i] = position(indices[i]);
  }
}

namespace {

// The tables cost O(M) time and 8 bytes per element (4 when M <= 2^32), so
// every communicator and call with the same (M, n, seed) shares one copy.
// Built under the lock: a second caller waits rather than building twice.
std::shared_ptr<const IndexPartition> cachedZenHashPartition(uint64_t universe, int parts,
                                                             uint64_t seed) {
  static std::mutex mutex;
  static std::map<std::tuple<uint64_t, int, uint64_t>, std::shared_ptr<const IndexPartition>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& entry = cache[{universe, parts, seed}];
  if (!entry) {
    entry = makeZenHashPartition(universe, parts, seed);
    SPCCL_INFO(kLogSparse, "ZenHash partition tables built: M=%llu n=%d seed=%llu",
               static_cast<unsigned long long>(universe), parts,
               static_cast<unsigned long long>(seed));
  }
  return entry;
}

}  // namespace

// nullptr for parts < 1 or an unknown kind; callers validate first.
std::shared_ptr<const IndexPartition> makePartition(PartitionKind kind, uint64_t universe,
                                                    int parts, uint64_t seed) {
  if (parts < 1) return nullptr;
  switch (kind) {
    case PartitionKind::ZenHash:
      return cachedZenHashPartition(universe, parts, seed);
    case PartitionKind::Permutation:
      return makePermutationPartition(universe, parts, seed);
    case PartitionKind::Contiguous:
      return makeContiguousPartition(universe, parts);
  }
  return nullptr;
}

}  // namespace spccl::sparse

#include "hash_test_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "sparse/bucketing_methods.h"

namespace spccl::gpu_test {

using kernels::cuda::HierarchicalHashLayout;
using sparse::IndexPartition;

std::vector<uint64_t> distinctRandomIndices(uint64_t universe, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> all(universe);
  for (uint64_t i = 0; i < universe; ++i) all[i] = i;
  for (size_t i = 0; i < count; ++i) std::swap(all[i], all[i + rng() % (universe - i)]);
  all.resize(count);
  return all;
}

HierarchicalHashLayout layoutFor(const IndexPartition& partition, uint64_t seed, size_t nnz,
                                 uint64_t fixedParallel, uint64_t fixedSerial) {
  const sparse::HierarchicalHashOptions defaults;
  HierarchicalHashLayout layout;
  layout.parts = partition.parts();
  layout.partitionSeed = seed;
  layout.secondLevelSeed = defaults.secondLevelSeed;
  for (int p = 0; p < partition.parts(); ++p) {
    const double expected = static_cast<double>(nnz) * static_cast<double>(partition.partSize(p)) /
                            static_cast<double>(partition.universe());
    const uint64_t r1 =
        fixedParallel > 0
            ? fixedParallel
            : std::max<uint64_t>(
                  defaults.minParallelSlots,
                  static_cast<uint64_t>(std::ceil(defaults.slotsPerExpectedIndex * expected)));
    const uint64_t r2 = fixedSerial > 0 ? fixedSerial : r1 / defaults.serialDivisor;
    layout.parallelSlots.push_back(r1);
    layout.serialSlots.push_back(std::max<uint64_t>(r2, 1));
  }
  return layout;
}

std::vector<uint64_t> indicesCollidingEverywhere(size_t count, uint64_t seed) {
  std::vector<uint64_t> found;
  for (uint64_t idx = 0; found.size() < count; ++idx) {
    bool allZero = true;
    for (int i = 1; i <= sparse::HierarchicalHashOptions::kHashes; ++i)
      allZero &= sparse::secondLevelSlot(i, idx, seed, 8) == 0;
    if (allZero) found.push_back(idx);
  }
  return found;
}

}  // namespace spccl::gpu_test

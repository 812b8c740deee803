// The per-entry work of the CUDA hierarchical hashing
// (kernels/cuda/hash_insert.h) on the CPU (test_cuda_logic_on_host,
// README.md): insertEntry() for one entry after another, the rounds grown
// as the driver grows them. Run serially it must place every entry where
// the CPU's single-threaded hashing does: buckets, order and statistics.
#include <gtest/gtest.h>

#include <vector>

#include "gpu_test_support.h"
#include "hash_test_inputs.h"
#include "kernels/cuda/hash_insert.h"
#include "sparse/bucketing_methods.h"
#include "sparse/index_partition.h"

namespace spccl::gpu_test {
namespace {

namespace cuda = kernels::cuda;

struct HostHashResult {
  std::vector<uint64_t> ordinals;
  std::vector<size_t> offsets;
  uint64_t rehashed = 0, serialWrites = 0, serialGrowths = 0;
};

// hierarchicalHashBucketing (hierarchical_hash_cuda.cu) with its kernel run
// one entry at a time and its CUB extraction as the loops it stands for:
// occupied slots in slot order (DeviceSelect::Flagged), and per region
// their count (DeviceSegmentedReduce::Sum).
HostHashResult hashLikeTheKernel(const cuda::HierarchicalHashLayout& layout,
                                 const std::vector<uint64_t>& indices,
                                 const std::vector<int>& owners) {
  const size_t parts = static_cast<size_t>(layout.parts);
  std::vector<uint64_t> serialSlots = layout.serialSlots;
  HostHashResult result;
  for (;;) {
    const std::vector<uint64_t> tables = cuda::hashTablesFor(layout, serialSlots);
    const uint64_t total = tables[parts];
    std::vector<uint64_t> slots(total);
    std::vector<unsigned> occupied(total, 0);
    std::vector<unsigned long long> serialCounts(parts, 0);
    const cuda::HashMemory memory{slots.data(), occupied.data(), serialCounts.data()};
    cuda::InsertCounts counts;
    for (size_t ordinal = 0; ordinal < indices.size(); ++ordinal)
      cuda::insertEntry(cuda::hashTablesView(tables.data(), parts), memory, indices[ordinal],
                        owners[ordinal], ordinal, layout.secondLevelSeed, &counts);
    if (cuda::growSerialMemories(serialCounts, &serialSlots, &result.serialGrowths)) continue;
    result.offsets.assign(parts + 1, 0);
    for (size_t p = 0; p < parts; ++p) {
      for (uint64_t t = tables[p]; t < tables[p + 1]; ++t)
        if (occupied[t] != 0) result.ordinals.push_back(slots[t]);
      result.offsets[p + 1] = result.ordinals.size();
    }
    result.rehashed = counts.rehashed;
    result.serialWrites = counts.serialWrites;
    return result;
  }
}

void expectHashingLikeCpu(const sparse::IndexPartition& partition,
                          const cuda::HierarchicalHashLayout& layout,
                          const std::vector<uint64_t>& indices, const std::vector<int>& owners,
                          const sparse::HierarchicalHashOptions& cpuOptions) {
  const std::vector<uint32_t> values(indices.size(), 3);
  sparse::Buckets cpu;
  sparse::hierarchicalHashBucketing(partition, sizeof(uint32_t), indices.data(), values.data(),
                                    indices.size(), cpuOptions, &cpu);
  const HostHashResult host = hashLikeTheKernel(layout, indices, owners);
  ASSERT_EQ(host.offsets, cpu.offsets);
  ASSERT_EQ(host.ordinals.size(), indices.size());
  for (size_t k = 0; k < indices.size(); ++k)
    ASSERT_EQ(partition.position(indices[host.ordinals[k]]), cpu.positions[k]) << "slot " << k;
  EXPECT_EQ(host.rehashed, cpu.rehashed);
  EXPECT_EQ(host.serialWrites, cpu.serialWrites);
  EXPECT_EQ(host.serialGrowths, cpu.serialGrowths);
}

// Owners from the shared h0 (kernels/zen_hash.h), so the buckets
// also check it against the CPU's ZenHash partition.
TEST(CudaLogicOnHost, HashingDefaultSizingPlacesLikeTheCpu) {
  for (const int parts : {1, 4, 16}) {
    for (const size_t nnz : {size_t{1}, size_t{1000}, size_t{30000}}) {
      SCOPED_TRACE(testing::Message() << "parts " << parts << " nnz " << nnz);
      const uint64_t universe = 1 << 20, seed = 3 + parts;
      const auto partition =
          sparse::makePartition(sparse::PartitionKind::ZenHash, universe, parts, seed);
      const auto indices = distinctRandomIndices(universe, nnz, nnz + parts);
      std::vector<int> owners(nnz);
      for (size_t i = 0; i < nnz; ++i)
        owners[i] = spccl::kernels::zenOwner(indices[i], seed, parts);
      expectHashingLikeCpu(*partition, layoutFor(*partition, seed, nnz), indices, owners, {});
    }
  }
}

TEST(CudaLogicOnHost, HashingTinyTablesPlaceLikeTheCpu) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 4;
  cpuOptions.fixedSerialSlots = 1;
  for (const auto kind : {sparse::PartitionKind::ZenHash, sparse::PartitionKind::Permutation,
                          sparse::PartitionKind::Contiguous}) {
    SCOPED_TRACE(testing::Message() << "kind " << int(kind));
    const auto partition = sparse::makePartition(kind, 100000, 8, 4);
    const auto indices = distinctRandomIndices(100000, 5000, 9);
    std::vector<int> owners(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) owners[i] = partition->owner(indices[i]);
    expectHashingLikeCpu(*partition, layoutFor(*partition, 4, indices.size(), 4, 1), indices,
                         owners, cpuOptions);
  }
}

TEST(CudaLogicOnHost, HashingTotalCollisionLikeTheCpu) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 8;
  cpuOptions.fixedSerialSlots = 1;
  // 3 entries: a serial count of exactly r2 + 1 (the growth's boundary).
  for (const size_t count : {size_t{2}, size_t{3}, size_t{49}}) {
    SCOPED_TRACE(testing::Message() << count << " entries");
    const auto indices = indicesCollidingEverywhere(count, cpuOptions.secondLevelSeed);
    const auto partition =
        sparse::makePartition(sparse::PartitionKind::Contiguous, indices.back() + 1, 1, 0);
    expectHashingLikeCpu(*partition, layoutFor(*partition, 0, count, 8, 1), indices,
                         std::vector<int>(count, 0), cpuOptions);
  }
}

}  // namespace
}  // namespace spccl::gpu_test

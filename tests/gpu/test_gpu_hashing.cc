// cuda::hierarchicalHashBucketing (Zen Algorithm 1 with atomics) against the
// CPU's sparse::hierarchicalHashBucketing: every bucket must hold the same
// set of indices (the order inside a bucket depends on the races), so the
// GPU's h0, h1..h3 and extraction are checked along with "never lose an
// index". Sizes as the CPU's defaults (r1 = 2x the expected entries,
// r2 = r1/10), and tiny tables that force collisions, serial memory and its
// growth, over every partition kind; and the CPU test's total collision,
// whose statistics are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "hash_test_inputs.h"
#include "kernels/cuda/hierarchical_hash_cuda.h"
#include "sparse/bucketing_methods.h"
#include "sparse/index_partition.h"

namespace spccl::gpu_test {
namespace {

using kernels::cuda::HierarchicalHashLayout;
using kernels::cuda::HierarchicalHashResult;
using sparse::IndexPartition;
using sparse::PartitionKind;

// Runs both and compares the buckets as sets of indices; returns the GPU's result.
HierarchicalHashResult expectSameBuckets(const IndexPartition& partition,
                                         const HierarchicalHashLayout& layout,
                                         const std::vector<uint64_t>& indices, bool passOwners,
                                         const sparse::HierarchicalHashOptions& cpuOptions) {
  const size_t nnz = indices.size();
  const std::vector<uint32_t> values(nnz, 1);
  sparse::Buckets cpu;
  sparse::hierarchicalHashBucketing(partition, sizeof(uint32_t), indices.data(), values.data(), nnz,
                                    cpuOptions, &cpu);

  std::vector<int> owners(nnz);
  for (size_t i = 0; i < nnz; ++i) owners[i] = partition.owner(indices[i]);
  DeviceBuffer gpuIndices(nnz * 8), gpuOwners(nnz * sizeof(int)), gpuOrdinals(nnz * 8);
  HierarchicalHashResult gpu;
  EXPECT_EQ(gpuIndices.upload(indices.data(), nnz * 8), cudaSuccess);
  EXPECT_EQ(gpuOwners.upload(owners.data(), nnz * sizeof(int)), cudaSuccess);
  const cudaError_t status = kernels::cuda::hierarchicalHashBucketing(
      layout, gpuIndices.get<uint64_t>(), passOwners ? gpuOwners.get<int>() : nullptr, nnz,
      gpuOrdinals.get<uint64_t>(), &gpu, nullptr);
  EXPECT_EQ(status, cudaSuccess) << cudaGetErrorString(status);
  if (status != cudaSuccess) return gpu;
  std::vector<uint64_t> ordinals(nnz);
  EXPECT_EQ(gpuOrdinals.download(ordinals.data(), nnz * 8), cudaSuccess);

  EXPECT_EQ(gpu.offsets, cpu.offsets) << "bucket sizes (h0) differ";
  if (gpu.offsets != cpu.offsets) return gpu;
  for (int p = 0; p < partition.parts(); ++p) {
    std::vector<uint64_t> expected, actual;
    for (size_t k = cpu.offsets[p]; k < cpu.offsets[p + 1]; ++k) {
      expected.push_back(partition.index(p, cpu.positions[k]));
      EXPECT_LT(ordinals[k], nnz);
      actual.push_back(ordinals[k] < nnz ? indices[ordinals[k]] : ~uint64_t{0});
    }
    std::sort(expected.begin(), expected.end());
    std::sort(actual.begin(), actual.end());
    EXPECT_EQ(actual, expected) << "bucket " << p;
  }
  EXPECT_LE(gpu.serialWrites, nnz);
  EXPECT_LE(gpu.rehashed, nnz);
  return gpu;
}

class GpuHashing : public GpuTest {};

TEST_F(GpuHashing, DefaultSizingMatchesCpuBuckets) {
  for (const uint64_t universe : {uint64_t{1000}, uint64_t{1} << 20, uint64_t{1} << 24}) {
    for (const int parts : {1, 4, 16, 64}) {
      const uint64_t seed = 17 + parts;
      const auto partition = sparse::makePartition(PartitionKind::ZenHash, universe, parts, seed);
      for (const double density : {0.0, 0.001, 0.01, 0.3}) {
        const size_t nnz = std::max<size_t>(1, static_cast<size_t>(density * universe));
        if (nnz > testCounts().back()) continue;
        SCOPED_TRACE(testing::Message()
                     << "M " << universe << " parts " << parts << " nnz " << nnz);
        const auto indices = distinctRandomIndices(universe, nnz, seed + nnz);
        const auto result = expectSameBuckets(*partition, layoutFor(*partition, seed, nnz), indices,
                                              /*passOwners=*/false, {});
        EXPECT_GE(result.rounds, 1);
      }
    }
  }
}

TEST_F(GpuHashing, TinyTablesEveryPartitionKind) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 4;
  cpuOptions.fixedSerialSlots = 1;
  for (const PartitionKind kind :
       {PartitionKind::ZenHash, PartitionKind::Permutation, PartitionKind::Contiguous}) {
    SCOPED_TRACE(testing::Message() << "kind " << int(kind));
    const auto partition = sparse::makePartition(kind, 100000, 8, 4);
    const auto indices = distinctRandomIndices(100000, 5000, 9);
    const auto result = expectSameBuckets(*partition, layoutFor(*partition, 4, 5000, 4, 1), indices,
                                          /*passOwners=*/true, cpuOptions);
    EXPECT_GT(result.serialGrowths, 0u);
    EXPECT_GE(result.serialWrites, indices.size() - 8 * 4);
    EXPECT_GE(result.rounds, 2);
  }
}

// Exactly one entry wins slot 0 whatever the races; the other 48 fail all
// three tries and go serial, whose memory grows 1 -> 64 (six doublings).
TEST_F(GpuHashing, TotalCollisionGoesSerialAndGrows) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 8;
  cpuOptions.fixedSerialSlots = 1;
  const auto indices = indicesCollidingEverywhere(49, cpuOptions.secondLevelSeed);
  const auto partition = sparse::makePartition(PartitionKind::Contiguous, indices.back() + 1, 1, 0);
  const auto result = expectSameBuckets(*partition, layoutFor(*partition, 0, 49, 8, 1), indices,
                                        /*passOwners=*/true, cpuOptions);
  EXPECT_EQ(result.rehashed, 48u);
  EXPECT_EQ(result.serialWrites, 48u);
  EXPECT_EQ(result.serialGrowths, 6u);
  EXPECT_EQ(result.rounds, 2);
}

TEST_F(GpuHashing, EmptyInputGivesEmptyBuckets) {
  HierarchicalHashLayout layout;
  layout.parts = 3;
  layout.parallelSlots = {8, 8, 8};
  layout.serialSlots = {1, 1, 1};
  HierarchicalHashResult result;
  DeviceBuffer buffer(64);
  ASSERT_EQ(kernels::cuda::hierarchicalHashBucketing(layout, buffer.get<uint64_t>(), nullptr, 0,
                                                     buffer.get<uint64_t>(), &result, nullptr),
            cudaSuccess);
  EXPECT_EQ(result.offsets, std::vector<size_t>(4, 0));
}

TEST_F(GpuHashing, RejectsABadLayout) {
  HierarchicalHashLayout layout;
  layout.parts = 2;
  layout.parallelSlots = {8, 8};
  layout.serialSlots = {1};  // one short
  HierarchicalHashResult result;
  DeviceBuffer buffer(64);
  EXPECT_EQ(kernels::cuda::hierarchicalHashBucketing(layout, buffer.get<uint64_t>(), nullptr, 4,
                                                     buffer.get<uint64_t>(), &result, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace spccl::gpu_test

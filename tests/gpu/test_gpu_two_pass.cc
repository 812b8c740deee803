// cuda::twoPassBucketing against the CPU's sparse::twoPassBucketing: both
// are stable, so the buckets must agree entry for entry: the same bucket
// sizes, and at every slot the same index (compared through its position
// in the owner's set, which is what the CPU stores). Every partition kind
// with owners given, and Zen's h0 computed on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cuda/two_pass_bucketing_cuda.h"
#include "sparse/bucketing_methods.h"
#include "sparse/index_partition.h"

namespace spccl::gpu_test {
namespace {

using sparse::PartitionKind;

// nnz distinct indices < universe in random order (a partial shuffle).
std::vector<uint64_t> shuffledIndices(uint64_t universe, size_t nnz, std::mt19937_64& rng) {
  std::vector<uint64_t> all(universe);
  for (uint64_t i = 0; i < universe; ++i) all[i] = i;
  for (size_t i = 0; i < nnz; ++i) std::swap(all[i], all[i + rng() % (universe - i)]);
  all.resize(nnz);
  return all;
}

void expectSameBuckets(const sparse::IndexPartition& partition, uint64_t seed,
                       const std::vector<uint64_t>& indices, bool passOwners) {
  const size_t nnz = indices.size();
  const std::vector<uint32_t> values(nnz, 7);
  sparse::Buckets cpu;
  sparse::twoPassBucketing(partition, sizeof(uint32_t), indices.data(), values.data(), nnz, &cpu);

  std::vector<int> owners(nnz);
  for (size_t i = 0; i < nnz; ++i) owners[i] = partition.owner(indices[i]);
  DeviceBuffer gpuIndices(nnz * 8), gpuOwners(nnz * sizeof(int)), gpuOrdinals(nnz * 8);
  SPCCL_CUDA_OK(gpuIndices.upload(indices.data(), nnz * 8));
  SPCCL_CUDA_OK(gpuOwners.upload(owners.data(), nnz * sizeof(int)));
  std::vector<size_t> offsets;
  SPCCL_CUDA_OK(kernels::cuda::twoPassBucketing(partition.parts(), seed, gpuIndices.get<uint64_t>(),
                                                passOwners ? gpuOwners.get<int>() : nullptr, nnz,
                                                gpuOrdinals.get<uint64_t>(), &offsets, nullptr));
  std::vector<uint64_t> ordinals(nnz);
  SPCCL_CUDA_OK(gpuOrdinals.download(ordinals.data(), nnz * 8));

  ASSERT_EQ(offsets, cpu.offsets);
  size_t mismatches = 0, first = nnz;
  for (size_t k = 0; k < nnz; ++k) {
    const bool same =
        ordinals[k] < nnz && partition.position(indices[ordinals[k]]) == cpu.positions[k];
    if (!same && mismatches++ == 0) first = k;
  }
  EXPECT_EQ(mismatches, 0u) << "first at slot " << first;
}

TEST_F(GpuTest, TwoPassBucketingMatchesCpuEntryForEntry) {
  std::mt19937_64 rng(5);
  for (const size_t nnz : testCounts()) {
    if (nnz > 4000000) continue;  // the universe below is 4 x nnz
    const uint64_t universe = std::max<uint64_t>(1000, 4 * nnz);
    const auto indices = shuffledIndices(universe, nnz, rng);
    for (const int parts : {1, 3, 16, 257}) {
      for (const PartitionKind kind :
           {PartitionKind::ZenHash, PartitionKind::Permutation, PartitionKind::Contiguous}) {
        SCOPED_TRACE(testing::Message()
                     << "nnz " << nnz << " parts " << parts << " kind " << int(kind));
        const uint64_t seed = 99 + parts;
        const auto partition = sparse::makePartition(kind, universe, parts, seed);
        expectSameBuckets(*partition, seed, indices, /*passOwners=*/true);
        if (kind == PartitionKind::ZenHash)
          expectSameBuckets(*partition, seed, indices, /*passOwners=*/false);
      }
    }
  }
}

TEST_F(GpuTest, TwoPassBucketingRejectsNoPartitions) {
  std::vector<size_t> offsets;
  DeviceBuffer buffer(64);
  EXPECT_EQ(kernels::cuda::twoPassBucketing(0, 0, buffer.get<uint64_t>(), nullptr, 1,
                                            buffer.get<uint64_t>(), &offsets, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace spccl::gpu_test

// Inputs shared by the hashing tests (test_gpu_hashing on a device,
// test_cuda_logic_on_host on the CPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/hierarchical_hash_cuda.h"
#include "sparse/index_partition.h"

namespace spccl::gpu_test {

// count distinct indices < universe, in random order.
std::vector<uint64_t> distinctRandomIndices(uint64_t universe, size_t count, uint64_t seed);

// The CPU's sizing (hierarchical_hashing.cc: r1 = 2x the entries expected in
// the partition, at least 8; r2 = r1/10), or fixed sizes when given.
kernels::cuda::HierarchicalHashLayout layoutFor(const sparse::IndexPartition& partition,
                                                uint64_t seed, size_t nnz,
                                                uint64_t fixedParallel = 0,
                                                uint64_t fixedSerial = 0);

// Indices whose h1, h2 and h3 all choose slot 0 of an 8-slot table.
std::vector<uint64_t> indicesCollidingEverywhere(size_t count, uint64_t seed);

}  // namespace spccl::gpu_test

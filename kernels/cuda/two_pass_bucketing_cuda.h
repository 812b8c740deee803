// Exact two-pass bucketing (docs/algorithms.md 2.6 (3)) on the GPU: the
// entries of a rank's non-zeros grouped by owner, each bucket in input
// order, exactly as sparse::twoPassBucketing orders them on the CPU (count
// per owner, prefix sum, stable scatter). Here the count, prefix sum and
// scatter are those of CUB's stable radix sort on the owner, over only the
// bits that can differ (ceil(log2 parts)).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spccl::kernels::cuda {

// indices (device, nnz entries). owners (device, optional): each entry's
// partition, < parts; nullptr means Zen's h0, zenOwner(index,
// partitionSeed, parts). ordinals (device, nnz entries) gets the entries'
// positions in the input, bucket by bucket; offsets (host) the parts + 1
// bucket boundaries. Synchronises `stream` to return the offsets.
cudaError_t twoPassBucketing(int parts, uint64_t partitionSeed, const uint64_t* indices,
                             const int* owners, size_t nnz, uint64_t* ordinals,
                             std::vector<size_t>* offsets, cudaStream_t stream);

}  // namespace spccl::kernels::cuda

// twoPassBucketing (two_pass_bucketing_cuda.h): h0 per entry (unless the
// caller gives owners), a stable radix sort of (owner, ordinal) pairs, and
// the bucket boundaries read off the sorted owners.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <vector>

#include "kernels/cuda/bucket_offsets.h"
#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream_buffer.cuh"
#include "kernels/cuda/two_pass_bucketing_cuda.h"
#include "kernels/zen_hash.h"

namespace spccl::kernels::cuda {
namespace {

__global__ void zenOwnersKernel(const uint64_t* indices, size_t nnz, uint64_t seed, int parts,
                                unsigned* owners) {
  for (size_t i = firstItem(); i < nnz; i += itemStride())
    owners[i] = static_cast<unsigned>(zenOwner(indices[i], seed, parts));
}

// One thread per boundary j in [0, nnz] (bucket_offsets.h).
__global__ void bucketOffsetsKernel(const unsigned* sorted, size_t nnz, int parts,
                                    uint64_t* offsets) {
  for (size_t j = firstItem(); j <= nnz; j += itemStride())
    writeOffsetsAt(j, sorted, nnz, parts, offsets);
}

int bitsFor(int parts) {
  int bits = 1;
  while ((1ll << bits) < parts) ++bits;
  return bits;
}

}  // namespace

cudaError_t twoPassBucketing(int parts, uint64_t partitionSeed, const uint64_t* indices,
                             const int* owners, size_t nnz, uint64_t* ordinals,
                             std::vector<size_t>* offsets, cudaStream_t stream) {
  if (parts < 1) return cudaErrorInvalidValue;
  offsets->assign(static_cast<size_t>(parts) + 1, 0);
  if (nnz == 0) return cudaSuccess;
  // Keys in, keys out, positions in, offsets.
  StreamBuffer keys(nnz * sizeof(unsigned), stream), sortedKeys(nnz * sizeof(unsigned), stream);
  StreamBuffer positions(nnz * sizeof(uint64_t), stream);
  StreamBuffer deviceOffsets((static_cast<size_t>(parts) + 1) * sizeof(uint64_t), stream);
  for (const StreamBuffer* buffer : {&keys, &sortedKeys, &positions, &deviceOffsets})
    if (buffer->status() != cudaSuccess) return buffer->status();

  const unsigned* ownerKeys = reinterpret_cast<const unsigned*>(owners);  // owners are >= 0
  if (owners == nullptr) {
    zenOwnersKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(indices, nnz, partitionSeed,
                                                                     parts, keys.get<unsigned>());
    ownerKeys = keys.get<unsigned>();
  }
  iotaKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(positions.get<uint64_t>(), nnz);
  cudaError_t status = launchError();
  if (status != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, ownerKeys, sortedKeys.get<unsigned>(),
                                           positions.get<uint64_t>(), ordinals,
                                           static_cast<int64_t>(nnz), 0, bitsFor(parts), stream);
  });
  if (status != cudaSuccess) return status;
  bucketOffsetsKernel<<<blocksFor(nnz + 1), kThreadsPerBlock, 0, stream>>>(
      sortedKeys.get<unsigned>(), nnz, parts, deviceOffsets.get<uint64_t>());
  if ((status = launchError()) != cudaSuccess) return status;
  std::vector<uint64_t> hostOffsets(static_cast<size_t>(parts) + 1);
  status = cudaMemcpyAsync(hostOffsets.data(), deviceOffsets.get<uint64_t>(),
                           hostOffsets.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  offsets->assign(hostOffsets.begin(), hostOffsets.end());
  return cudaSuccess;
}

}  // namespace spccl::kernels::cuda

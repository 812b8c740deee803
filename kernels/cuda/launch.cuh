// Launch shapes shared by the CUDA kernels: grid-stride loops over a
// one-dimensional range, with a grid capped so that a launch of any size
// stays within the grid limits and every thread does a few iterations.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

namespace spccl::kernels::cuda {

constexpr unsigned kThreadsPerBlock = 256;
// 2^16 blocks of 256 threads: enough to fill any current GPU several times.
constexpr size_t kMaxBlocks = size_t{1} << 16;

inline unsigned blocksFor(size_t work) {
  const size_t blocks = (work + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::clamp<size_t>(blocks, 1, kMaxBlocks));
}

// The first item of this thread and the stride between its items.
__device__ inline size_t firstItem() {
  return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline size_t itemStride() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

// out[i] = i: the identity permutation, e.g. the values CUB sorts along.
template <typename T>
__global__ void iotaKernel(T* out, size_t count) {
  for (size_t i = firstItem(); i < count; i += itemStride()) out[i] = static_cast<T>(i);
}

// The error of the launch just made (or of an earlier asynchronous call).
inline cudaError_t launchError() { return cudaGetLastError(); }

}  // namespace spccl::kernels::cuda

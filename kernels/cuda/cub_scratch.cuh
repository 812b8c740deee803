// Runs a CUB device algorithm with its scratch memory taken from the
// stream-ordered allocator: CUB's two-call protocol (ask the size, then
// run) behind one call, the scratch freed on the same stream afterwards.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace spccl::kernels::cuda {

// call(void* scratch, size_t& bytes) -> cudaError_t, a CUB device call
// with its other arguments bound.
template <typename CubCall>
cudaError_t runWithScratch(cudaStream_t stream, CubCall&& call) {
  size_t bytes = 0;
  cudaError_t status = call(nullptr, bytes);
  if (status != cudaSuccess) return status;
  void* scratch = nullptr;
  status = cudaMallocAsync(&scratch, bytes > 0 ? bytes : 1, stream);  // never a 0-byte request
  if (status != cudaSuccess) return status;
  status = call(scratch, bytes);
  const cudaError_t freed = cudaFreeAsync(scratch, stream);
  return status != cudaSuccess ? status : freed;
}

}  // namespace spccl::kernels::cuda

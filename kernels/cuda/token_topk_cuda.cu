// token_topk_cuda.h: the rank-order sum one thread per token; the top-k
// mask from a stable CUB radix sort of (tokenRankKey, token) pairs, whose
// first `keep` tokens are the CPU's nth_element choice under the same
// strict total order; row moves as element copies of the widest size the
// row length and alignment allow.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream_buffer.cuh"
#include "kernels/cuda/token_rank_key.h"
#include "kernels/cuda/token_topk_cuda.h"

namespace spccl::kernels::cuda {
namespace {

__global__ void sumScoresKernel(const float* all, int nranks, size_t tokens, float* out) {
  for (size_t t = firstItem(); t < tokens; t += itemStride()) {
    float sum = all[t];
    for (int r = 1; r < nranks; ++r) sum += all[static_cast<size_t>(r) * tokens + t];
    out[t] = sum;
  }
}

__global__ void rankKeysKernel(const float* scores, size_t tokens, uint32_t* keys) {
  for (size_t t = firstItem(); t < tokens; t += itemStride()) keys[t] = tokenRankKey(scores[t]);
}

__global__ void markKeptKernel(const uint64_t* order, size_t keep, unsigned char* mask) {
  for (size_t j = firstItem(); j < keep; j += itemStride()) mask[order[j]] = 1;
}

// Row r of `from` (at rows[r] when gathering) to row r of `to` (at rows[r]
// when scattering), in Element units.
template <typename Element, bool kGather>
__global__ void moveRowsKernel(const Element* from, const uint64_t* rows, size_t nrows,
                               size_t rowElements, Element* to) {
  const size_t total = nrows * rowElements;
  for (size_t i = firstItem(); i < total; i += itemStride()) {
    const size_t r = i / rowElements, e = i % rowElements;
    if constexpr (kGather)
      to[i] = from[rows[r] * rowElements + e];
    else
      to[rows[r] * rowElements + e] = from[i];
  }
}

template <bool kGather>
cudaError_t moveRows(const void* from, const uint64_t* rows, size_t nrows, size_t rowBytes,
                     void* to, cudaStream_t stream) {
  if (nrows == 0 || rowBytes == 0) return cudaSuccess;
  const auto fits = [&](size_t width) {
    return rowBytes % width == 0 && reinterpret_cast<uintptr_t>(from) % width == 0 &&
           reinterpret_cast<uintptr_t>(to) % width == 0;
  };
  const unsigned blocks = blocksFor(nrows * rowBytes / (fits(16) ? 16 : fits(4) ? 4 : 1));
  if (fits(16)) {
    moveRowsKernel<uint4, kGather><<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<const uint4*>(from), rows, nrows, rowBytes / 16, static_cast<uint4*>(to));
  } else if (fits(4)) {
    moveRowsKernel<uint32_t, kGather><<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<const uint32_t*>(from), rows, nrows, rowBytes / 4, static_cast<uint32_t*>(to));
  } else {
    moveRowsKernel<unsigned char, kGather>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(static_cast<const unsigned char*>(from), rows,
                                                  nrows, rowBytes, static_cast<unsigned char*>(to));
  }
  return launchError();
}

}  // namespace

cudaError_t sumScoresInRankOrder(const float* all, int nranks, size_t tokens, float* out,
                                 cudaStream_t stream) {
  if (nranks < 1) return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  sumScoresKernel<<<blocksFor(tokens), kThreadsPerBlock, 0, stream>>>(all, nranks, tokens, out);
  return launchError();
}

cudaError_t selectTopTokens(const float* scores, size_t tokens, size_t keep, unsigned char* mask,
                            cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  keep = keep < tokens ? keep : tokens;
  cudaError_t status = cudaMemsetAsync(mask, keep == tokens ? 1 : 0, tokens, stream);
  if (status != cudaSuccess || keep == 0 || keep == tokens) return status;
  StreamBuffer keys(tokens * sizeof(uint32_t), stream),
      sortedKeys(tokens * sizeof(uint32_t), stream);
  StreamBuffer positions(tokens * sizeof(uint64_t), stream),
      order(tokens * sizeof(uint64_t), stream);
  for (const StreamBuffer* buffer : {&keys, &sortedKeys, &positions, &order})
    if (buffer->status() != cudaSuccess) return buffer->status();
  rankKeysKernel<<<blocksFor(tokens), kThreadsPerBlock, 0, stream>>>(scores, tokens,
                                                                     keys.get<uint32_t>());
  iotaKernel<<<blocksFor(tokens), kThreadsPerBlock, 0, stream>>>(positions.get<uint64_t>(), tokens);
  if ((status = launchError()) != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(
        scratch, bytes, keys.get<uint32_t>(), sortedKeys.get<uint32_t>(), positions.get<uint64_t>(),
        order.get<uint64_t>(), static_cast<int64_t>(tokens), 0, 32, stream);
  });
  if (status != cudaSuccess) return status;
  markKeptKernel<<<blocksFor(keep), kThreadsPerBlock, 0, stream>>>(order.get<uint64_t>(), keep,
                                                                   mask);
  return launchError();
}

cudaError_t gatherRows(const void* tensor, const uint64_t* rows, size_t nrows, size_t rowBytes,
                       void* packed, cudaStream_t stream) {
  return moveRows<true>(tensor, rows, nrows, rowBytes, packed, stream);
}

cudaError_t scatterRows(const void* packed, const uint64_t* rows, size_t nrows, size_t rowBytes,
                        void* tensor, cudaStream_t stream) {
  return moveRows<false>(packed, rows, nrows, rowBytes, tensor, stream);
}

}  // namespace spccl::kernels::cuda

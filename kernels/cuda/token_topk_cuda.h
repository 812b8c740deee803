// The token choice of the top-k all-reduce (AccTFM section 4.3.1;
// src/compress/token_selection.h, token_rows.h) on the GPU, with the CPU's
// results: the same sums bit for bit (same additions in the same order;
// a NaN sum may differ in payload, as the GPU's NaNs are 0x7fffffff, which
// no mask depends on) and the same mask (the same strict total order,
// token_rank_key.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace spccl::kernels::cuda {

// out[t] = all[0][t] + all[1][t] + ... in rank order (device pointers).
cudaError_t sumScoresInRankOrder(const float* all, int nranks, size_t tokens, float* out,
                                 cudaStream_t stream);
// mask[t] = 1 for the `keep` best tokens, else 0 (device pointers).
cudaError_t selectTopTokens(const float* scores, size_t tokens, size_t keep, unsigned char* mask,
                            cudaStream_t stream);
// packed row i = tensor row rows[i], and back (rowBytes each).
cudaError_t gatherRows(const void* tensor, const uint64_t* rows, size_t nrows, size_t rowBytes,
                       void* packed, cudaStream_t stream);
cudaError_t scatterRows(const void* packed, const uint64_t* rows, size_t nrows, size_t rowBytes,
                        void* tensor, cudaStream_t stream);

}  // namespace spccl::kernels::cuda

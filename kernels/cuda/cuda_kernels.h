// The CUDA implementations of the kernels of kernels.h and sparse_kernels.h,
// on device memory. They compute every element with the same source as the
// CPU reference (the SPCCL_HOST_DEVICE helpers of kernels/cpu), so their
// results are the CPU's bit for bit; tests/gpu checks that on a GPU.
//
// Unlike the CPU table they are stream-ordered: each call enqueues its work
// on `stream` and returns without synchronising. The returned error is that
// of enqueueing (a bad argument, a failed launch or allocation); a fault in
// a kernel surfaces at the next synchronisation, as always in CUDA. Calls
// that need scratch memory (those built on CUB) take it from the stream-
// ordered allocator (cudaMallocAsync) and free it on the same stream.
//
// They are not in the engine's KernelTable: the engine reduces host memory
// and its table entries are synchronous, so these are used by tests/gpu and
// perf/kernels_bench only, until the engine learns about device buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "spccl.h"

namespace spccl::kernels::cuda {

// ---- dense (kernels.h: ReduceFn, DivideFn) ----
// dst[i] = a[i] op b[i]; dst may alias a or b. Avg reduces as Sum.
cudaError_t reduce(spcclDataType_t type, spcclRedOp_t op, void* dst, const void* a, const void* b,
                   size_t count, cudaStream_t stream);
// buf[i] = buf[i] / divisor (divisor != 0; integers truncate toward zero).
cudaError_t divide(spcclDataType_t type, void* buf, size_t count, int divisor, cudaStream_t stream);

// ---- sparse (sparse_kernels.h) ----
// *total (device memory) = the number of non-zeros of dense[0, count).
cudaError_t countNonZeros(spcclDataType_t type, const void* dense, size_t count, size_t* total,
                          cudaStream_t stream);
// The first min(capacity, non-zeros) non-zeros in ascending index order;
// *total (device memory) = the number of non-zeros in all.
cudaError_t extractNonZeros(spcclDataType_t type, const void* dense, size_t count,
                            uint64_t* indices, void* values, size_t capacity, size_t* total,
                            cudaStream_t stream);
// dense[indices[i]] = dense[indices[i]] op values[i] in i order: duplicates
// are combined in i order, as on the CPU, so the result does not depend on
// thread scheduling. Sorts (index, i) pairs first unless the caller
// promises distinct indices.
enum class ScatterIndices { MayRepeat, Distinct };
cudaError_t scatterReduce(spcclDataType_t type, spcclRedOp_t op, void* dense,
                          const uint64_t* indices, const void* values, size_t nnz,
                          ScatterIndices kind, cudaStream_t stream);
// All count elements of dense: values[i] at indices[i] (distinct, < count),
// zero elsewhere.
cudaError_t densify(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                    void* dense, size_t count, cudaStream_t stream);
// values[i] = dense[indices[i]].
cudaError_t gatherValues(spcclDataType_t type, const void* dense, const uint64_t* indices,
                         size_t nnz, void* values, cudaStream_t stream);

// ---- codecs (kernels.h: QuantizeFn, DequantizeFn, DequantizeAddFn, WidenAddFn) ----
// type: spcclFloat32, spcclFloat16 or spcclBfloat16 (cudaErrorInvalidValue
// otherwise, as for a spec outside kernels.h's bounds).
cudaError_t quantize(spcclDataType_t type, const QuantizerSpec& spec, const void* in, size_t count,
                     unsigned char* out, float* residual, cudaStream_t stream);
cudaError_t dequantize(spcclDataType_t type, const QuantizerSpec& spec, const unsigned char* in,
                       size_t count, void* out, cudaStream_t stream);
// acc[i] += decoding of element i. NaN sums are the canonical NaN (the CPU
// keeps x86's NaN propagation there; the two agree except in NaN payloads,
// which kernels.h leaves unspecified for these f32 accumulators).
cudaError_t dequantizeAdd(const QuantizerSpec& spec, const unsigned char* in, size_t count,
                          float* acc, cudaStream_t stream);
// acc[i] += in[i] widened to f32 (NaN sums as for dequantizeAdd).
cudaError_t widenAdd(spcclDataType_t type, float* acc, const void* in, size_t count,
                     cudaStream_t stream);

}  // namespace spccl::kernels::cuda

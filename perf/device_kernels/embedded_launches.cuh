// The kernels libspccl embeds (kernels/device_*/*.cu, compiled into this
// bench from the same sources), launched with the grids libspccl gives
// them (src/coll/device_reduce_launch.cc, src/sparse/device_nonzeros.cc,
// src/compress/device_rows.cc, src/compress/device_codecs.cc), f32 only.
// Launch errors are checked by the caller (cudaGetLastError).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernels.h"

namespace spccl::perf::device_kernels {

// libspccl's grid-stride grid: a block of 256 threads per 256 items, at
// most 2^16 blocks.
unsigned gridStrideBlocks(uint64_t items);

// out = in[0] + in[1] + ... left to right (spcclReduceInputs_f32_sum);
// inputCount <= 16, one launch.
void reduceSum(const float* const* inputs, int inputCount, float* out, uint64_t count,
               cudaStream_t stream);

// The extraction's scratch and output (kernels/device_sparse/extract_nonzeros.h).
struct ExtractBuffers {
  uint64_t* blockCounts;       // [tiles]
  uint64_t* blockSignedZeros;  // [tiles]
  uint64_t* totals;            // [2]: non-zeros, signed zeros
  uint64_t* indices;           // [capacity]
  float* values;               // [capacity]
  uint64_t capacity;
};
uint64_t extractTiles(uint64_t count);
// Count per tile, scan, ordered write: in's non-zeros as (index, value).
void extractNonZeros(const float* in, uint64_t count, const ExtractBuffers& buffers,
                     cudaStream_t stream);
// out zeroed, then out[indices[i]] = values[i].
void zeroFillAndScatter(float* out, uint64_t count, const uint64_t* indices, const float* values,
                        uint64_t nnz, cudaStream_t stream);

// The token rows: packed row r <-> tensor row rows[r] (rowBytes each).
struct RowsBuffers {
  void* tensor;
  void* packed;
  const uint64_t* rows;
  uint64_t rowCount;
  uint64_t rowBytes;
  uint64_t tokens;
};
void gatherRows(const RowsBuffers& buffers, cudaStream_t stream);
void scatterRows(const RowsBuffers& buffers, cudaStream_t stream);

// The codecs, f32 elements: encode = the block scales, then the codes
// (residual: error feedback, or nullptr); out holds quantizedBytes.
void encode(const kernels::QuantizerSpec& spec, const float* in, float* residual,
            unsigned char* out, uint64_t count, cudaStream_t stream);
void decode(const kernels::QuantizerSpec& spec, const unsigned char* encoded, float* out,
            uint64_t count, cudaStream_t stream);
// acc = (0 + in) + the decoding (the ring's running sum; in may be nullptr).
void accumulate(const kernels::QuantizerSpec& spec, const float* in, const unsigned char* encoded,
                float* acc, uint64_t count, cudaStream_t stream);

}  // namespace spccl::perf::device_kernels

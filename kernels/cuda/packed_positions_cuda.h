// The Packed encoding of sparse messages (src/sparse/encoding_codecs.h,
// packed_encoding.cc) on the GPU, byte for byte the CPU's: ascending
// positions as LEB128 varints of their gaps (varint.h), then the values.
// Varint lengths depend on the data, so both directions synchronise
// `stream` to learn them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace spccl::kernels::cuda {

// positions (device, nnz, strictly ascending), values (device, nnz of
// valueBytes) -> out (device, room for nnz * (10 + valueBytes) bytes at
// most); *outBytes (host) = the encoding's size.
cudaError_t encodePacked(const uint64_t* positions, const void* values, size_t nnz,
                         size_t valueBytes, unsigned char* out, size_t* outBytes,
                         cudaStream_t stream);
// The nnz positions coded in varints[0, varintBytes) (the bytes before the
// values). cudaErrorInvalidValue when the bytes are not exactly nnz valid
// varints of positions below universe (what the CPU decoder rejects as a
// remote error); universe < 2^64 - 1.
cudaError_t decodePackedPositions(const unsigned char* varints, size_t varintBytes,
                                  uint64_t universe, size_t nnz, uint64_t* positions,
                                  cudaStream_t stream);

}  // namespace spccl::kernels::cuda

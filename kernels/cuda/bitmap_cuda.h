// The bitmap encoding of sparse messages (src/sparse/encoding_codecs.h,
// bitmap_encoding.cc; Zen's hash bitmap over a ZenHash partition's
// positions) on the GPU, byte for byte the CPU's: ceil(universe/8) bytes of
// map (bit t&7 of byte t/8 set for each position t), then the values in
// ascending position order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace spccl::kernels::cuda {

// positions (device, nnz, distinct, < universe, any order), values (device,
// nnz of valueBytes each) -> out (device, ceil(universe/8) + nnz*valueBytes).
cudaError_t encodeBitmap(const uint64_t* positions, const void* values, size_t nnz,
                         uint64_t universe, size_t valueBytes, unsigned char* out,
                         cudaStream_t stream);
// The positions of the bits set in map over [0, universe), ascending, at
// most `capacity` of them; *total (device) = how many are set in all. The
// caller checks *total against the message's nnz, as the CPU decoder does,
// and the values that follow the map are a plain copy.
cudaError_t decodeBitmapPositions(const unsigned char* map, uint64_t universe, uint64_t* positions,
                                  size_t capacity, size_t* total, cudaStream_t stream);

}  // namespace spccl::kernels::cuda

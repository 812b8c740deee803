// bitmap_cuda.h: encode sorts the positions (a stable CUB radix sort over
// the universe's bits, carrying each value's ordinal), writes each map byte
// once (bitmap_bytes.h) and gathers the values in position order; decode
// compacts the set bits' positions with CUB DeviceSelect::If into a
// capacity-bounded output, as extractNonZeros does.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "kernels/cuda/bitmap_bytes.h"
#include "kernels/cuda/bitmap_cuda.h"
#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream_buffer.cuh"

namespace spccl::kernels::cuda {
namespace {

__global__ void bitmapBytesKernel(const uint64_t* sorted, size_t nnz, unsigned char* map) {
  for (size_t j = firstItem(); j < nnz; j += itemStride()) writeBitmapByteAt(j, sorted, nnz, map);
}

// out value j = values[order[j]], byte by byte (any value size).
__global__ void gatherValueBytesKernel(const unsigned char* values, const uint64_t* order,
                                       size_t nnz, size_t valueBytes, unsigned char* out) {
  const size_t total = nnz * valueBytes;
  for (size_t i = firstItem(); i < total; i += itemStride())
    out[i] = values[order[i / valueBytes] * valueBytes + i % valueBytes];
}

struct BitIsSet {
  const unsigned char* map;
  __device__ bool operator()(uint64_t t) const { return (map[t >> 3] >> (t & 7)) & 1u; }
};

struct WriteCapped {
  uint64_t* positions;
  size_t capacity;
  __device__ void operator()(ptrdiff_t k, uint64_t t) const {
    if (static_cast<size_t>(k) < capacity) positions[k] = t;
  }
};

int bitsFor(uint64_t universe) {
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < universe) ++bits;
  return bits;
}

}  // namespace

cudaError_t encodeBitmap(const uint64_t* positions, const void* values, size_t nnz,
                         uint64_t universe, size_t valueBytes, unsigned char* out,
                         cudaStream_t stream) {
  const size_t mapBytes = static_cast<size_t>((universe + 7) / 8);
  cudaError_t status = cudaMemsetAsync(out, 0, mapBytes, stream);
  if (status != cudaSuccess || nnz == 0) return status;
  StreamBuffer buffer(3 * nnz * sizeof(uint64_t), stream);  // sorted, ordinals, their order
  if (buffer.status() != cudaSuccess) return buffer.status();
  uint64_t* sorted = buffer.get<uint64_t>();
  uint64_t* ordinals = sorted + nnz;
  uint64_t* order = sorted + 2 * nnz;
  iotaKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(ordinals, nnz);
  if ((status = launchError()) != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, positions, sorted, ordinals, order,
                                           static_cast<int64_t>(nnz), 0, bitsFor(universe), stream);
  });
  if (status != cudaSuccess) return status;
  bitmapBytesKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(sorted, nnz, out);
  if ((status = launchError()) != cudaSuccess || valueBytes == 0) return status;
  gatherValueBytesKernel<<<blocksFor(nnz * valueBytes), kThreadsPerBlock, 0, stream>>>(
      static_cast<const unsigned char*>(values), order, nnz, valueBytes, out + mapBytes);
  return launchError();
}

cudaError_t decodeBitmapPositions(const unsigned char* map, uint64_t universe, uint64_t* positions,
                                  size_t capacity, size_t* total, cudaStream_t stream) {
  if (universe == 0) return cudaMemsetAsync(total, 0, sizeof(size_t), stream);
  auto output = thrust::make_tabulate_output_iterator(WriteCapped{positions, capacity});
  return runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::If(scratch, bytes, thrust::counting_iterator<uint64_t>(0), output,
                                 total, static_cast<int64_t>(universe), BitIsSet{map}, stream);
  });
}

}  // namespace spccl::kernels::cuda

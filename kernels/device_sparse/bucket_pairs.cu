// Balanced Parallelism's push buckets on the device (bucket_pairs.h), with
// C names so that libspccl finds them in the fatbin with
// cuModuleGetFunction. Compiled only into that fatbin
// (cmake/SpcclDeviceImages.cmake): libspccl links no CUDA library.
//
// Plain kernels, no CUB: a thread per rank tile, pair or chunk (grid-stride
// loops), and the one-block scan of extract_nonzeros.cu's shape. Not yet
// run on a GPU (docs/gpu.md).
#include <cstdint>

#include "kernels/device_sparse/bucket_pairs.h"

namespace ds = spccl::kernels::device_sparse;

namespace {

__device__ uint64_t firstItem() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ uint64_t itemStride() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }

}  // namespace

extern "C" __global__ void spcclBucketCountRankTiles(ds::BucketArgs args) {
  for (uint64_t t = firstItem(); t < args.rankTiles; t += itemStride()) ds::countRankTile(args, t);
}

// One block of ds::kScanThreads.
extern "C" __global__ void spcclBucketScan(ds::BucketArgs args) {
  ds::scanSum(args, threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) ds::scanBase(args);
  __syncthreads();
  ds::scanChunk(args, threadIdx.x);
}

extern "C" __global__ void spcclBucketLocatePairs(ds::BucketArgs args) {
  for (uint64_t i = firstItem(); i < args.nnz; i += itemStride()) ds::locatePair(args, i);
}

extern "C" __global__ void spcclBucketCountDigits(ds::BucketArgs args) {
  for (uint64_t c = firstItem(); c < args.chunks; c += itemStride()) ds::countDigits(args, c);
}

extern "C" __global__ void spcclBucketScatterDigits(ds::BucketArgs args) {
  for (uint64_t c = firstItem(); c < args.chunks; c += itemStride()) ds::scatterDigits(args, c);
}

extern "C" __global__ void spcclBucketCountChunkOwners(ds::BucketArgs args) {
  for (uint64_t c = firstItem(); c < args.chunks; c += itemStride()) ds::countChunkOwners(args, c);
}

extern "C" __global__ void spcclBucketScatterChunks(ds::BucketArgs args) {
  for (uint64_t c = firstItem(); c < args.chunks; c += itemStride()) ds::scatterChunk(args, c);
}

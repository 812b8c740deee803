// The sparse all-reduce's device kernels (extract_nonzeros.h), one per type
// where the element matters, with C names so that libspccl finds them in
// the fatbin with cuModuleGetFunction. Compiled only into that fatbin
// (cmake/SpcclDeviceImages.cmake): libspccl links no CUDA library.
//
// Plain kernels, no CUB (nothing links the CUDA runtime): a block per tile,
// coalesced rounds of kThreads elements, order kept by a warp ballot and a
// scan of the warps' counts. Not yet run on a GPU (docs/gpu.md).
#include <cstdint>

#include "kernels/device_sparse/extract_nonzeros.h"

namespace spccl::kernels::device_sparse {

namespace {

constexpr unsigned kWarps = kThreads / 32;

// The block's sum of `mine` (every thread gets it).
__device__ uint64_t blockSum(uint64_t mine, uint64_t* shared) {
  for (int offset = 16; offset > 0; offset /= 2)
    mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = mine;
  __syncthreads();
  uint64_t sum = 0;
  for (unsigned w = 0; w < kWarps; ++w) sum += shared[w];
  __syncthreads();
  return sum;
}

}  // namespace

template <typename Format>
__device__ void countNonZeros(const ExtractArgs& args) {
  using Storage = typename Format::Storage;
  __shared__ uint64_t shared[kWarps];
  uint64_t first = 0, last = 0;
  tileRange(args.count, blockIdx.x, &first, &last);
  const auto* in = reinterpret_cast<const Storage*>(args.input);
  uint64_t nonZeros = 0, signedZeros = 0;
  for (uint64_t i = first + threadIdx.x; i < last; i += kThreads) {
    nonZeros += isNonZero<Format>(in[i]) ? 1 : 0;
    signedZeros += isSignedZero<Format>(in[i]) ? 1 : 0;
  }
  nonZeros = blockSum(nonZeros, shared);
  signedZeros = blockSum(signedZeros, shared);
  if (threadIdx.x == 0) {
    reinterpret_cast<uint64_t*>(args.blockCounts)[blockIdx.x] = nonZeros;
    reinterpret_cast<uint64_t*>(args.blockSignedZeros)[blockIdx.x] = signedZeros;
  }
}

// One block of kScanThreads: each thread sums a chunk of the tiles'
// counts, thread 0 scans the chunk sums, each thread scans its chunk.
__device__ void scanBlockCounts(const ExtractArgs& args) {
  __shared__ uint64_t chunkBase[kScanThreads];
  __shared__ uint64_t chunkSignedZeros[kScanThreads];
  auto* counts = reinterpret_cast<uint64_t*>(args.blockCounts);
  const auto* signedZeros = reinterpret_cast<const uint64_t*>(args.blockSignedZeros);
  uint64_t first = 0, last = 0;
  chunkRange(args.blocks, threadIdx.x, kScanThreads, &first, &last);
  chunkBase[threadIdx.x] = sumOf(counts, first, last);
  chunkSignedZeros[threadIdx.x] = sumOf(signedZeros, first, last);
  __syncthreads();
  if (threadIdx.x == 0) {
    auto* totals = reinterpret_cast<uint64_t*>(args.totals);
    totals[0] = exclusiveScan(chunkBase, 0, kScanThreads, 0);
    totals[1] = sumOf(chunkSignedZeros, 0, kScanThreads);
  }
  __syncthreads();
  exclusiveScan(counts, first, last, chunkBase[threadIdx.x]);
}

template <typename Format>
__device__ void writeNonZeros(const ExtractArgs& args) {
  using Storage = typename Format::Storage;
  __shared__ uint64_t warpBase[kWarps + 1];  // [kWarps]: the round's total
  uint64_t first = 0, last = 0;
  tileRange(args.count, blockIdx.x, &first, &last);
  const auto* in = reinterpret_cast<const Storage*>(args.input);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint64_t slot = reinterpret_cast<const uint64_t*>(args.blockCounts)[blockIdx.x];
  for (uint64_t round = first; round < last; round += kThreads) {
    const uint64_t i = round + threadIdx.x;
    const Storage v = i < last ? in[i] : Storage{};
    const bool keep = i < last && isNonZero<Format>(v);
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warpBase[warp] = static_cast<uint64_t>(__popc(ballot));
    __syncthreads();
    if (threadIdx.x == 0) warpBase[kWarps] = exclusiveScan(warpBase, 0, kWarps, 0);
    __syncthreads();
    if (keep)
      writePair<Format>(args, slot + warpBase[warp] + __popc(ballot & ((1u << lane) - 1u)), i, v);
    const uint64_t roundTotal = warpBase[kWarps];
    // Every thread read warpBase before the next round overwrites it.
    __syncthreads();
    slot += roundTotal;
  }
}

template <typename Format>
__device__ void zeroFill(const ScatterArgs& args) {
  using Storage = typename Format::Storage;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count;
       i += stride)
    reinterpret_cast<Storage*>(args.output)[i] = Storage{};
}

template <typename Format>
__device__ void scatterPairs(const ScatterArgs& args) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.nnz;
       i += stride)
    scatterPair<Format>(args, i);
}

}  // namespace spccl::kernels::device_sparse

namespace ds = spccl::kernels::device_sparse;
namespace k = spccl::kernels;

extern "C" __global__ void spcclScanBlockCounts(ds::ExtractArgs args) { ds::scanBlockCounts(args); }

#define SPCCL_DEVICE_SPARSE_KERNELS(suffix, Format)                              \
  extern "C" __global__ void spcclCountNonZeros_##suffix(ds::ExtractArgs args) { \
    ds::countNonZeros<Format>(args);                                             \
  }                                                                              \
  extern "C" __global__ void spcclWriteNonZeros_##suffix(ds::ExtractArgs args) { \
    ds::writeNonZeros<Format>(args);                                             \
  }                                                                              \
  extern "C" __global__ void spcclZeroFill_##suffix(ds::ScatterArgs args) {      \
    ds::zeroFill<Format>(args);                                                  \
  }                                                                              \
  extern "C" __global__ void spcclScatterPairs_##suffix(ds::ScatterArgs args) {  \
    ds::scatterPairs<Format>(args);                                              \
  }

SPCCL_DEVICE_SPARSE_KERNELS(i8, k::NativeFormat<int8_t>)
SPCCL_DEVICE_SPARSE_KERNELS(u8, k::NativeFormat<uint8_t>)
SPCCL_DEVICE_SPARSE_KERNELS(i32, k::NativeFormat<int32_t>)
SPCCL_DEVICE_SPARSE_KERNELS(u32, k::NativeFormat<uint32_t>)
SPCCL_DEVICE_SPARSE_KERNELS(i64, k::NativeFormat<int64_t>)
SPCCL_DEVICE_SPARSE_KERNELS(u64, k::NativeFormat<uint64_t>)
SPCCL_DEVICE_SPARSE_KERNELS(f16, k::HalfFormat)
SPCCL_DEVICE_SPARSE_KERNELS(f32, k::NativeFormat<float>)
SPCCL_DEVICE_SPARSE_KERNELS(f64, k::NativeFormat<double>)
SPCCL_DEVICE_SPARSE_KERNELS(bf16, k::Bfloat16Format)

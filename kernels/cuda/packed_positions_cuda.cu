// packed_positions_cuda.h. Encoding: each entry's varint length, an
// exclusive scan for where it starts, then every entry writes its own
// varint. Decoding: a byte whose high bit is clear ends a varint, so an
// exclusive scan of those ends numbers the varint each start byte begins;
// each start byte parses its varint into the step gap + 1, and an inclusive
// (saturating) scan of the steps gives position + 1.
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/packed_positions_cuda.h"
#include "kernels/cuda/stream_buffer.cuh"
#include "kernels/cuda/varint.h"

namespace spccl::kernels::cuda {
namespace {

__global__ void varintLengthsKernel(const uint64_t* positions, size_t nnz, uint64_t* lengths) {
  for (size_t i = firstItem(); i < nnz; i += itemStride())
    lengths[i] = varintLength(gapBefore(positions, i));
}

__global__ void writeVarintsKernel(const uint64_t* positions, size_t nnz, const uint64_t* starts,
                                   unsigned char* out) {
  for (size_t i = firstItem(); i < nnz; i += itemStride())
    writeVarint(gapBefore(positions, i), out + starts[i]);
}

struct EndsVarint {
  __host__ __device__ uint64_t operator()(unsigned char byte) const { return (byte & 0x80) == 0; }
};

// Start bytes parse their varint into steps[k] = gap + 1; a malformed one,
// or a gap that cannot fit below universe, sets *bad.
__global__ void parseVarintsKernel(const unsigned char* bytes, size_t count,
                                   const uint64_t* endsBefore, uint64_t universe, uint64_t* steps,
                                   unsigned* bad) {
  for (size_t b = firstItem(); b < count; b += itemStride()) {
    if (b > 0 && (bytes[b - 1] & 0x80) != 0) continue;  // inside a varint
    uint64_t gap = 0;
    if (readVarint(bytes + b, count - b, &gap) == 0 || gap >= universe) {
      atomicOr(bad, 1u);
      continue;
    }
    steps[endsBefore[b]] = gap + 1;
  }
}

// Addition that sticks at 2^64 - 1 instead of wrapping: associative, so a
// scan with it flags any running sum that overflowed.
struct SaturatingAdd {
  __host__ __device__ uint64_t operator()(uint64_t a, uint64_t b) const {
    return a + b < a ? ~uint64_t{0} : a + b;
  }
};

__global__ void positionsFromSumsKernel(uint64_t* sums, size_t nnz) {
  for (size_t i = firstItem(); i < nnz; i += itemStride()) sums[i] -= 1;
}

}  // namespace

cudaError_t encodePacked(const uint64_t* positions, const void* values, size_t nnz,
                         size_t valueBytes, unsigned char* out, size_t* outBytes,
                         cudaStream_t stream) {
  *outBytes = 0;
  if (nnz == 0) return cudaSuccess;
  StreamBuffer buffer(2 * nnz * sizeof(uint64_t), stream);  // lengths, starts
  if (buffer.status() != cudaSuccess) return buffer.status();
  uint64_t* lengths = buffer.get<uint64_t>();
  uint64_t* starts = lengths + nnz;
  varintLengthsKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(positions, nnz, lengths);
  cudaError_t status = launchError();
  if (status != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(scratch, bytes, lengths, starts, static_cast<int64_t>(nnz),
                                         stream);
  });
  if (status != cudaSuccess) return status;
  writeVarintsKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(positions, nnz, starts, out);
  if ((status = launchError()) != cudaSuccess) return status;
  uint64_t last[2];  // start and length of the last varint
  status =
      cudaMemcpyAsync(&last[0], starts + nnz - 1, sizeof(uint64_t), cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(&last[1], lengths + nnz - 1, sizeof(uint64_t), cudaMemcpyDeviceToHost,
                             stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  const size_t varintBytes = static_cast<size_t>(last[0] + last[1]);
  status = cudaMemcpyAsync(out + varintBytes, values, nnz * valueBytes, cudaMemcpyDeviceToDevice,
                           stream);
  if (status == cudaSuccess) *outBytes = varintBytes + nnz * valueBytes;
  return status;
}

cudaError_t decodePackedPositions(const unsigned char* varints, size_t varintBytes,
                                  uint64_t universe, size_t nnz, uint64_t* positions,
                                  cudaStream_t stream) {
  if (universe == ~uint64_t{0}) return cudaErrorInvalidValue;
  if (nnz == 0) return varintBytes == 0 ? cudaSuccess : cudaErrorInvalidValue;
  if (varintBytes < nnz) return cudaErrorInvalidValue;  // every varint takes a byte
  // Varint ends before each byte (varintBytes + 1: the last is the total),
  // steps, the bad flag.
  StreamBuffer endsBefore((varintBytes + 1) * sizeof(uint64_t), stream);
  StreamBuffer steps(nnz * sizeof(uint64_t), stream);
  StreamBuffer bad(sizeof(unsigned), stream);
  for (const StreamBuffer* buffer : {&endsBefore, &steps, &bad})
    if (buffer->status() != cudaSuccess) return buffer->status();
  auto ends = thrust::make_transform_iterator(varints, EndsVarint{});
  cudaError_t status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(scratch, bytes, ends, endsBefore.get<uint64_t>(),
                                         static_cast<int64_t>(varintBytes), stream);
  });
  if (status != cudaSuccess) return status;
  // The count of varints: ends before the last byte, plus the last byte's.
  uint64_t endsBeforeLast = 0;
  unsigned char lastByte = 0;
  status = cudaMemcpyAsync(&endsBeforeLast, endsBefore.get<uint64_t>() + varintBytes - 1,
                           sizeof endsBeforeLast, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess)
    status =
        cudaMemcpyAsync(&lastByte, varints + varintBytes - 1, 1, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  // The last byte must end a varint (else one is cut off), and there must
  // be exactly nnz of them (else entries are missing or bytes stray).
  if ((lastByte & 0x80) != 0 || endsBeforeLast + 1 != nnz) return cudaErrorInvalidValue;

  if ((status = cudaMemsetAsync(bad.get<void>(), 0, sizeof(unsigned), stream)) != cudaSuccess)
    return status;
  parseVarintsKernel<<<blocksFor(varintBytes), kThreadsPerBlock, 0, stream>>>(
      varints, varintBytes, endsBefore.get<uint64_t>(), universe, steps.get<uint64_t>(),
      bad.get<unsigned>());
  if ((status = launchError()) != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceScan::InclusiveScan(scratch, bytes, steps.get<uint64_t>(), positions,
                                          SaturatingAdd{}, static_cast<int64_t>(nnz), stream);
  });
  if (status != cudaSuccess) return status;
  unsigned malformed = 0;
  uint64_t lastSum = 0;  // the last position + 1
  status = cudaMemcpyAsync(&malformed, bad.get<unsigned>(), sizeof malformed,
                           cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(&lastSum, positions + nnz - 1, sizeof lastSum, cudaMemcpyDeviceToHost,
                             stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  if (malformed != 0 || lastSum > universe) return cudaErrorInvalidValue;
  positionsFromSumsKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(positions, nnz);
  return launchError();
}

}  // namespace spccl::kernels::cuda

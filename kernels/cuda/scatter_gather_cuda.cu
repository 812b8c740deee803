// scatterReduce / densify / gatherValues (sparse_kernels.h) on the GPU.
//
// scatterReduce must combine duplicate indices in i order, as the CPU loop
// does, or float results would depend on thread scheduling (and f16/bf16
// round after every step). So unless the caller promises distinct indices,
// the (index, i) pairs are first sorted by index with CUB's radix sort,
// which is stable and so keeps each index's values in i order; then the
// first thread of each run of equal indices folds the whole run, one
// element at a time with the CPU's load-op-store. A run is serial: an
// index repeated n times costs n dependent steps in one thread.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/scatter_runs.h"
#include "kernels/cuda/stream_buffer.cuh"

namespace spccl::kernels::cuda {
namespace {

template <typename Format, typename Op>
__global__ void scatterDistinctKernel(typename Format::Storage* dense, const uint64_t* indices,
                                      const typename Format::Storage* values, size_t nnz) {
  for (size_t i = firstItem(); i < nnz; i += itemStride())
    combineInto<Format, Op>(dense[indices[i]], values[i]);
}

// One thread per sorted entry; run heads fold their runs (scatter_runs.h).
template <typename Format, typename Op>
__global__ void scatterRunsKernel(typename Format::Storage* dense, const uint64_t* sortedIndices,
                                  const uint64_t* order, const typename Format::Storage* values,
                                  size_t nnz) {
  for (size_t j = firstItem(); j < nnz; j += itemStride())
    foldRunAt<Format, Op>(j, dense, sortedIndices, order, values, nnz);
}

template <typename Format, typename Op>
cudaError_t scatterWithRepeats(typename Format::Storage* dense, const uint64_t* indices,
                               const typename Format::Storage* values, size_t nnz,
                               cudaStream_t stream) {
  // sortedIndices, positions (0..nnz-1) and their sorted order: one buffer.
  StreamBuffer buffer(3 * nnz * sizeof(uint64_t), stream);
  if (buffer.status() != cudaSuccess) return buffer.status();
  uint64_t* sortedIndices = buffer.get<uint64_t>();
  uint64_t* positions = sortedIndices + nnz;
  uint64_t* order = sortedIndices + 2 * nnz;
  iotaKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(positions, nnz);
  cudaError_t status = launchError();
  if (status != cudaSuccess) return status;
  status = runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, indices, sortedIndices, positions, order,
                                           static_cast<int64_t>(nnz), 0, 64, stream);
  });
  if (status != cudaSuccess) return status;
  scatterRunsKernel<Format, Op>
      <<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(dense, sortedIndices, order, values, nnz);
  return launchError();
}

template <typename Format, typename Op>
cudaError_t scatterElements(void* dense, const uint64_t* indices, const void* values, size_t nnz,
                            ScatterIndices kind, cudaStream_t stream) {
  using Storage = typename Format::Storage;
  auto* out = static_cast<Storage*>(dense);
  const auto* in = static_cast<const Storage*>(values);
  if (kind == ScatterIndices::MayRepeat)
    return scatterWithRepeats<Format, Op>(out, indices, in, nnz, stream);
  scatterDistinctKernel<Format, Op>
      <<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(out, indices, in, nnz);
  return launchError();
}

template <typename Format>
cudaError_t scatterWithOp(spcclRedOp_t op, void* dense, const uint64_t* indices, const void* values,
                          size_t nnz, ScatterIndices kind, cudaStream_t stream) {
  switch (op) {
    case spcclSum:
    case spcclAvg:  // Avg reduces as Sum
      return scatterElements<Format, SumOp>(dense, indices, values, nnz, kind, stream);
    case spcclProd:
      return scatterElements<Format, ProdOp>(dense, indices, values, nnz, kind, stream);
    case spcclMax:
      return scatterElements<Format, MaxOp>(dense, indices, values, nnz, kind, stream);
    case spcclMin:
      return scatterElements<Format, MinOp>(dense, indices, values, nnz, kind, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

// Moving whole elements needs only their size.
template <size_t B>
struct ElementBits;
template <>
struct ElementBits<1> {
  using Type = uint8_t;
};
template <>
struct ElementBits<2> {
  using Type = uint16_t;
};
template <>
struct ElementBits<4> {
  using Type = uint32_t;
};
template <>
struct ElementBits<8> {
  using Type = uint64_t;
};

template <typename Element>
__global__ void scatterCopyKernel(Element* dense, const uint64_t* indices, const Element* values,
                                  size_t nnz) {
  for (size_t i = firstItem(); i < nnz; i += itemStride()) dense[indices[i]] = values[i];
}

template <typename Element>
__global__ void gatherKernel(Element* values, const Element* dense, const uint64_t* indices,
                             size_t nnz) {
  for (size_t i = firstItem(); i < nnz; i += itemStride()) values[i] = dense[indices[i]];
}

// fn(Element{}) for the unsigned type of valueBytes bytes.
template <typename Fn>
cudaError_t withElementOfSize(size_t valueBytes, Fn&& fn) {
  switch (valueBytes) {
    case 1:
      return fn(ElementBits<1>::Type{});
    case 2:
      return fn(ElementBits<2>::Type{});
    case 4:
      return fn(ElementBits<4>::Type{});
    case 8:
      return fn(ElementBits<8>::Type{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t scatterReduce(spcclDataType_t type, spcclRedOp_t op, void* dense,
                          const uint64_t* indices, const void* values, size_t nnz,
                          ScatterIndices kind, cudaStream_t stream) {
  if (nnz == 0) return cudaSuccess;
  return withFormat(type, cudaErrorInvalidValue, [&](auto format) {
    return scatterWithOp<decltype(format)>(op, dense, indices, values, nnz, kind, stream);
  });
}

// Zero everything, then place the values: two passes over dense where the
// CPU makes one, but both are plain streaming writes on a GPU.
cudaError_t densify(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                    void* dense, size_t count, cudaStream_t stream) {
  return withElementOfSize(valueBytes, [&](auto element) {
    using Element = decltype(element);
    if (count == 0) return cudaSuccess;
    cudaError_t status = cudaMemsetAsync(dense, 0, count * sizeof(Element), stream);
    if (status != cudaSuccess || nnz == 0) return status;
    scatterCopyKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(
        static_cast<Element*>(dense), indices, static_cast<const Element*>(values), nnz);
    return launchError();
  });
}

cudaError_t gatherValues(spcclDataType_t type, const void* dense, const uint64_t* indices,
                         size_t nnz, void* values, cudaStream_t stream) {
  const size_t valueBytes = withFormat(
      type, size_t{0}, [](auto format) { return sizeof(typename decltype(format)::Storage); });
  return withElementOfSize(valueBytes, [&](auto element) {
    using Element = decltype(element);
    if (nnz == 0) return cudaSuccess;
    gatherKernel<<<blocksFor(nnz), kThreadsPerBlock, 0, stream>>>(
        static_cast<Element*>(values), static_cast<const Element*>(dense), indices, nnz);
    return launchError();
  });
}

}  // namespace spccl::kernels::cuda

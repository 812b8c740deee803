// countNonZeros / extractNonZeros (sparse_kernels.h) on the GPU, by stream
// compaction with CUB: DeviceReduce counts, DeviceSelect::If compacts the
// indices whose element is non-zero (ZeroTest of format_dispatch.h, the
// CPU's definition: -0.0 is zero, NaN is not), in ascending order as the
// CPU does. Its output is a tabulate iterator that writes the k-th
// (index, value) pair only while k < capacity, so a short output is cut
// off, never overrun, and the count of all non-zeros still comes out.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cuda/cub_scratch.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace spccl::kernels::cuda {
namespace {

template <typename Format>
struct IsNonZeroAt {
  const typename Format::Storage* dense;
  __device__ bool operator()(uint64_t i) const { return !ZeroTest<Format>::isZero(dense[i]); }
};

template <typename Format>
struct NonZeroCountAt {
  const typename Format::Storage* dense;
  __device__ size_t operator()(uint64_t i) const {
    return ZeroTest<Format>::isZero(dense[i]) ? 0 : 1;
  }
};

// Called by DeviceSelect with the k-th selected index.
template <typename Format>
struct WriteNonZeroPair {
  using Storage = typename Format::Storage;
  const Storage* dense;
  uint64_t* indices;
  Storage* values;
  size_t capacity;
  __device__ void operator()(ptrdiff_t k, uint64_t i) const {
    if (static_cast<size_t>(k) >= capacity) return;
    indices[k] = i;
    values[k] = dense[i];
  }
};

template <typename Format>
cudaError_t countElements(const void* dense, size_t count, size_t* total, cudaStream_t stream) {
  const auto* in = static_cast<const typename Format::Storage*>(dense);
  auto flags = thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0),
                                               NonZeroCountAt<Format>{in});
  return runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceReduce::Sum(scratch, bytes, flags, total, static_cast<int64_t>(count),
                                  stream);
  });
}

template <typename Format>
cudaError_t extractElements(const void* dense, size_t count, uint64_t* indices, void* values,
                            size_t capacity, size_t* total, cudaStream_t stream) {
  using Storage = typename Format::Storage;
  const auto* in = static_cast<const Storage*>(dense);
  auto output = thrust::make_tabulate_output_iterator(
      WriteNonZeroPair<Format>{in, indices, static_cast<Storage*>(values), capacity});
  return runWithScratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::If(scratch, bytes, thrust::counting_iterator<uint64_t>(0), output,
                                 total, static_cast<int64_t>(count), IsNonZeroAt<Format>{in},
                                 stream);
  });
}

}  // namespace

cudaError_t countNonZeros(spcclDataType_t type, const void* dense, size_t count, size_t* total,
                          cudaStream_t stream) {
  if (count == 0) return cudaMemsetAsync(total, 0, sizeof(size_t), stream);
  return withFormat(type, cudaErrorInvalidValue, [&](auto format) {
    return countElements<decltype(format)>(dense, count, total, stream);
  });
}

cudaError_t extractNonZeros(spcclDataType_t type, const void* dense, size_t count,
                            uint64_t* indices, void* values, size_t capacity, size_t* total,
                            cudaStream_t stream) {
  if (count == 0) return cudaMemsetAsync(total, 0, sizeof(size_t), stream);
  return withFormat(type, cudaErrorInvalidValue, [&](auto format) {
    return extractElements<decltype(format)>(dense, count, indices, values, capacity, total,
                                             stream);
  });
}

}  // namespace spccl::kernels::cuda

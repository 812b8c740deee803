// reduce and divide (kernels.h) on the GPU: one element-wise kernel per
// (format, op), instantiated from the same formats (element_format.h) and
// ops (reduce_ops.h) as the CPU table, so f16/bf16 are computed in f32 and
// rounded once, integers wrap, and every NaN is the canonical one.
//
// Each thread reads a[i] and b[i] before writing dst[i], so dst may alias
// a or b. When the three pointers are 16-byte aligned the body moves 16
// bytes per thread per load (fewer, wider memory transactions), the tail
// one element at a time.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.cuh"

namespace spccl::kernels::cuda {
namespace {

// kWidth consecutive elements, loaded and stored as one 16-byte access.
template <typename Storage>
struct alignas(16) Vector16 {
  static constexpr size_t kWidth = 16 / sizeof(Storage);
  Storage lane[kWidth];
};

// dst[i] = a[i] op b[i] over [0, count): whole Vector16s for the aligned
// body, single elements for the tail (or everything when unaligned).
template <typename Format, typename Op>
__global__ void reduceKernel(typename Format::Storage* dst, const typename Format::Storage* a,
                             const typename Format::Storage* b, size_t count, bool aligned) {
  using Storage = typename Format::Storage;
  using Vector = Vector16<Storage>;
  size_t done = 0;
  if (aligned) {
    const size_t vectors = count / Vector::kWidth;
    auto* out = reinterpret_cast<Vector*>(dst);
    const auto* left = reinterpret_cast<const Vector*>(a);
    const auto* right = reinterpret_cast<const Vector*>(b);
    for (size_t v = firstItem(); v < vectors; v += itemStride()) {
      const Vector x = left[v];
      const Vector y = right[v];
      Vector r;
#pragma unroll
      for (size_t k = 0; k < Vector::kWidth; ++k)
        r.lane[k] = Format::store(Op::apply(Format::load(x.lane[k]), Format::load(y.lane[k])));
      out[v] = r;
    }
    done = vectors * Vector::kWidth;
  }
  for (size_t i = done + firstItem(); i < count; i += itemStride())
    dst[i] = Format::store(Op::apply(Format::load(a[i]), Format::load(b[i])));
}

template <typename Format>
__global__ void divideKernel(typename Format::Storage* buf, size_t count, int divisor) {
  for (size_t i = firstItem(); i < count; i += itemStride())
    buf[i] = Format::store(divideTruncating(Format::load(buf[i]), divisor));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename Format, typename Op>
cudaError_t launchReduce(void* dst, const void* a, const void* b, size_t count,
                         cudaStream_t stream) {
  using Storage = typename Format::Storage;
  const bool aligned = aligned16(dst) && aligned16(a) && aligned16(b);
  const size_t work = aligned ? count / Vector16<Storage>::kWidth + 1 : count;
  reduceKernel<Format, Op><<<blocksFor(work), kThreadsPerBlock, 0, stream>>>(
      static_cast<Storage*>(dst), static_cast<const Storage*>(a), static_cast<const Storage*>(b),
      count, aligned);
  return launchError();
}

template <typename Format>
cudaError_t reduceWithOp(spcclRedOp_t op, void* dst, const void* a, const void* b, size_t count,
                         cudaStream_t stream) {
  switch (op) {
    case spcclSum:
    case spcclAvg:  // Avg reduces as Sum; divide() finishes it (kernels.h)
      return launchReduce<Format, SumOp>(dst, a, b, count, stream);
    case spcclProd:
      return launchReduce<Format, ProdOp>(dst, a, b, count, stream);
    case spcclMax:
      return launchReduce<Format, MaxOp>(dst, a, b, count, stream);
    case spcclMin:
      return launchReduce<Format, MinOp>(dst, a, b, count, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t reduce(spcclDataType_t type, spcclRedOp_t op, void* dst, const void* a, const void* b,
                   size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  return withFormat(type, cudaErrorInvalidValue, [&](auto format) {
    return reduceWithOp<decltype(format)>(op, dst, a, b, count, stream);
  });
}

cudaError_t divide(spcclDataType_t type, void* buf, size_t count, int divisor,
                   cudaStream_t stream) {
  if (divisor == 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  return withFormat(type, cudaErrorInvalidValue, [&](auto format) {
    using Format = decltype(format);
    divideKernel<Format><<<blocksFor(count), kThreadsPerBlock, 0, stream>>>(
        static_cast<typename Format::Storage*>(buf), count, divisor);
    return launchError();
  });
}

}  // namespace spccl::kernels::cuda

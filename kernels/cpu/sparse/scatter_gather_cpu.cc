// scatterReduce / gatherValues (sparse_kernels.h) on the CPU: indexed loops
// in i order, so duplicate indices combine deterministically. Every op of
// reduce_ops.h works, with the dense kernels' semantics (f16/bf16 computed
// in float and rounded once per element, canonical NaN); Avg reduces as Sum.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/block_zeroing.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/sparse_kernels.h"

namespace spccl::kernels {
namespace {

template <typename Format, typename Op>
int scatterElements(void* dense, const uint64_t* indices, const void* values, size_t nnz) {
  using Storage = typename Format::Storage;
  auto* out = static_cast<Storage*>(dense);
  const auto* in = static_cast<const Storage*>(values);
  for (size_t i = 0; i < nnz; ++i) {
    Storage& target = out[indices[i]];
    target = Format::store(Op::apply(Format::load(target), Format::load(in[i])));
  }
  return 0;
}

template <typename Format>
int scatterWithOp(spcclRedOp_t op, void* dense, const uint64_t* indices, const void* values,
                  size_t nnz) {
  switch (op) {
    case spcclProd:
      return scatterElements<Format, ProdOp>(dense, indices, values, nnz);
    case spcclMax:
      return scatterElements<Format, MaxOp>(dense, indices, values, nnz);
    case spcclMin:
      return scatterElements<Format, MinOp>(dense, indices, values, nnz);
    default:  // spcclSum, spcclAvg
      return scatterElements<Format, SumOp>(dense, indices, values, nnz);
  }
}

template <typename Format>
int gatherElements(const void* dense, const uint64_t* indices, size_t nnz, void* values) {
  using Storage = typename Format::Storage;
  const auto* in = static_cast<const Storage*>(dense);
  auto* out = static_cast<Storage*>(values);
  for (size_t i = 0; i < nnz; ++i) out[i] = in[indices[i]];
  return 0;
}

template <size_t B>
void densifyElements(const uint64_t* indices, const unsigned char* values, size_t nnz,
                     unsigned char* dense, size_t count) {
  BlockZeroingWriter<B> out(dense, count);
  for (size_t i = 0; i < nnz; ++i) out.put(static_cast<size_t>(indices[i]), values + i * B);
  out.finish();
}

template <size_t B>
void scatterCopies(const uint64_t* indices, const unsigned char* values, size_t nnz,
                   unsigned char* dense) {
  for (size_t i = 0; i < nnz; ++i) std::memcpy(dense + indices[i] * B, values + i * B, B);
}

}  // namespace

void scatterCopy(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                 void* dense) {
  const auto* in = static_cast<const unsigned char*>(values);
  auto* out = static_cast<unsigned char*>(dense);
  switch (valueBytes) {
    case 1:
      return scatterCopies<1>(indices, in, nnz, out);
    case 2:
      return scatterCopies<2>(indices, in, nnz, out);
    case 4:
      return scatterCopies<4>(indices, in, nnz, out);
    default:
      return scatterCopies<8>(indices, in, nnz, out);
  }
}

void densifyUnordered(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                      void* dense, size_t count) {
  std::memset(dense, 0, count * valueBytes);
  scatterCopy(valueBytes, indices, values, nnz, dense);
}

void densify(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
             void* dense, size_t count) {
  const auto* in = static_cast<const unsigned char*>(values);
  auto* out = static_cast<unsigned char*>(dense);
  switch (valueBytes) {
    case 1:
      return densifyElements<1>(indices, in, nnz, out, count);
    case 2:
      return densifyElements<2>(indices, in, nnz, out, count);
    case 4:
      return densifyElements<4>(indices, in, nnz, out, count);
    default:
      return densifyElements<8>(indices, in, nnz, out, count);
  }
}

void scatterReduce(spcclDataType_t type, spcclRedOp_t op, void* dense, const uint64_t* indices,
                   const void* values, size_t nnz) {
  withFormat(type, 0, [&](auto format) {
    return scatterWithOp<decltype(format)>(op, dense, indices, values, nnz);
  });
}

void gatherValues(spcclDataType_t type, const void* dense, const uint64_t* indices, size_t nnz,
                  void* values) {
  withFormat(type, 0, [&](auto format) {
    return gatherElements<decltype(format)>(dense, indices, nnz, values);
  });
}

}  // namespace spccl::kernels

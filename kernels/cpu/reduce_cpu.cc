// The CPU kernel table: reduce[type][op] and divide[type] instantiated from
// one loop template per kernel over the formats of element_format.h and the
// ops of reduce_ops.h. It is the reference the CUDA table is tested against.
//
// The loops are plain indexed loops that read a[i] and b[i] before writing
// dst[i], so they are correct when dst aliases a or b, and the compiler
// vectorises them (with a run-time overlap check instead of restrict,
// which aliasing would make undefined); this file is built at -O3
// (top-level CMakeLists.txt).
#include <cstddef>

#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/element_format.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/kernels.h"

namespace spccl::kernels {
namespace {

template <typename Format, typename Op>
void reduceElements(void* dst, const void* a, const void* b, size_t count) {
  using Storage = typename Format::Storage;
  Storage* out = static_cast<Storage*>(dst);
  const Storage* left = static_cast<const Storage*>(a);
  const Storage* right = static_cast<const Storage*>(b);
  for (size_t i = 0; i < count; ++i) {
    out[i] = Format::store(Op::apply(Format::load(left[i]), Format::load(right[i])));
  }
}

template <typename Format>
void divideElements(void* buf, size_t count, int divisor) {
  using Storage = typename Format::Storage;
  Storage* values = static_cast<Storage*>(buf);
  for (size_t i = 0; i < count; ++i) {
    values[i] = Format::store(divideTruncating(Format::load(values[i]), divisor));
  }
}

// Avg reduces as Sum; divide() finishes it (kernels.h).
template <typename Format>
void addType(KernelTable& table, spcclDataType_t type) {
  table.reduce[type][spcclSum] = reduceElements<Format, SumOp>;
  table.reduce[type][spcclProd] = reduceElements<Format, ProdOp>;
  table.reduce[type][spcclMax] = reduceElements<Format, MaxOp>;
  table.reduce[type][spcclMin] = reduceElements<Format, MinOp>;
  table.reduce[type][spcclAvg] = reduceElements<Format, SumOp>;
  table.divide[type] = divideElements<Format>;
}

KernelTable buildCpuKernels() {
  KernelTable table{};
  table.name = "cpu";
  addType<NativeFormat<int8_t>>(table, spcclInt8);
  addType<NativeFormat<uint8_t>>(table, spcclUint8);
  addType<NativeFormat<int32_t>>(table, spcclInt32);
  addType<NativeFormat<uint32_t>>(table, spcclUint32);
  addType<NativeFormat<int64_t>>(table, spcclInt64);
  addType<NativeFormat<uint64_t>>(table, spcclUint64);
  addType<HalfFormat>(table, spcclFloat16);
  addType<NativeFormat<float>>(table, spcclFloat32);
  addType<NativeFormat<double>>(table, spcclFloat64);
  addType<Bfloat16Format>(table, spcclBfloat16);
  addCompressionKernels(table);
  return table;
}

}  // namespace

const KernelTable& cpuKernels() {
  static const KernelTable table = buildCpuKernels();
  return table;
}

}  // namespace spccl::kernels

// The data-parallel primitives every algorithm uses, behind one dispatch
// table so that a CUDA implementation (kernels/cuda) can slot in beside the
// CPU one (kernels/cpu), which is the reference the CUDA one is tested
// against. Later issues add entries (non-zero extraction, hashing, codecs).
#pragma once

#include <cstddef>

#include "spccl.h"

namespace spccl::kernels {

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b.
// Avg reduces as Sum here; divide() finishes it.
// Semantics, identical for every implementation:
//  - integers wrap (two's complement), as NCCL;
//  - floats follow IEEE; f16/bf16 are computed in f32 and rounded to
//    nearest-even once per call;
//  - min/max propagate NaN and are symmetric: min(-0,+0) = -0,
//    max(-0,+0) = +0 whatever the operand order, so a pairwise combine
//    gives the same bits on both partners;
//  - for the same reason every NaN result (of any op, and of divide) is the
//    canonical quiet NaN, sign clear: 0x7fc00000 (f32), 0x7ff8... (f64),
//    0x7e00 (f16), 0x7fc0 (bf16).
using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);
// buf[i] = buf[i] / divisor; integers truncate toward zero.
using DivideFn = void (*)(void* buf, size_t count, int divisor);

struct KernelTable {
  const char* name;
  ReduceFn reduce[spcclNumTypes][spcclNumOps];
  DivideFn divide[spcclNumTypes];
};

const KernelTable& cpuKernels();

// Convenience wrappers that dispatch through a table.
inline void reduce(const KernelTable& table, spcclDataType_t type, spcclRedOp_t op, void* dst,
                   const void* a, const void* b, size_t count) {
  table.reduce[type][op](dst, a, b, count);
}

}  // namespace spccl::kernels

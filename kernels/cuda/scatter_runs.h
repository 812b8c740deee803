// The per-thread work of scatterReduce with repeated indices
// (scatter_gather_cuda.cu), as a host-and-device function so that
// tests/gpu/test_cuda_logic_on_host can run it on the CPU: after a stable
// sort of (index, i) by index, the thread at the head of each run of equal
// indices folds the whole run into dense, in i order, with the CPU's
// load-op-store (scatter_gather_cpu.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

// target = target op value, rounded as the CPU does.
template <typename Format, typename Op>
SPCCL_HOST_DEVICE void combineInto(typename Format::Storage& target,
                                   typename Format::Storage value) {
  target = Format::store(Op::apply(Format::load(target), Format::load(value)));
}

// sortedIndices[j] came from position order[j] of the input; does nothing
// unless j heads its run.
template <typename Format, typename Op>
SPCCL_HOST_DEVICE void foldRunAt(size_t j, typename Format::Storage* dense,
                                 const uint64_t* sortedIndices, const uint64_t* order,
                                 const typename Format::Storage* values, size_t nnz) {
  const uint64_t index = sortedIndices[j];
  if (j > 0 && sortedIndices[j - 1] == index) return;
  typename Format::Storage target = dense[index];
  for (size_t k = j; k < nnz && sortedIndices[k] == index; ++k)
    combineInto<Format, Op>(target, values[order[k]]);
  dense[index] = target;
}

}  // namespace spccl::kernels::cuda

// The per-thread work that turns sorted owners into bucket boundaries
// (two_pass_bucketing_cuda.cu), host-and-device so that tests/gpu can run
// it on the CPU: offsets[p] = the first j with sorted[j] >= p, p in
// [0, parts]. The thread at boundary j (between sorted[j-1] and sorted[j],
// reading -1 before the first and `parts` after the last) writes the
// offsets of the partitions it steps over, so each is written exactly once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels::cuda {

SPCCL_HOST_DEVICE inline void writeOffsetsAt(size_t j, const unsigned* sorted, size_t nnz,
                                             int parts, uint64_t* offsets) {
  const long long before = j == 0 ? -1 : static_cast<long long>(sorted[j - 1]);
  const long long at = j == nnz ? parts : static_cast<long long>(sorted[j]);
  for (long long p = before + 1; p <= at; ++p) offsets[p] = j;
}

}  // namespace spccl::kernels::cuda

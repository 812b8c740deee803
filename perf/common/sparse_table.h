// The sparse benchmark's table: per row the input (density, overlap, γ),
// the sparse all-reduce (chosen algorithm, times, bandwidths, bytes sent
// against the formula, push/pull imbalance, checks) and the dense
// all-reduce of the same inputs with the speed-up. The preamble and footer
// are the dense harness's (perf_table.h).
#pragma once

#include "common/sparse_result.h"

namespace spccl::perf {

void printSparseColumnHeader();
void printSparseRow(const SparseSizeResult& row);

}  // namespace spccl::perf

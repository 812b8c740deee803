// The last step of a sparse all-reduce: the result set (global indices
// ascending, identical on every rank) becomes the caller's output -- the
// dense tensor, written in one sequential pass, or the COO arrays with the
// cancelled zeros dropped -- after Avg's division, which touches only the
// result's pairs.
#pragma once

#include <cstddef>

#include "kernels/kernels.h"
#include "sparse/sparse_allreduce.h"
#include "sparse/sparse_set.h"

namespace spccl::sparse {

// *outputNnz: the non-zeros of the result (the same on every rank). A call
// with resultOut and no denseOutput gets the set moved there.
// Fails (nothing written, *call.outNnz set) when a COO output is too small.
spcclResult_t deliverResult(const SparseCall& call, const kernels::KernelTable& table, int nranks,
                            SparseSet* result, size_t* outputNnz);

// For a schedule that reduced into the dense output: Avg's division and
// the non-zero count there (knownNnz when the schedule counted them, else
// SIZE_MAX: counted here, a pass over the output).
void finishDenseResult(const SparseCall& call, const kernels::KernelTable& table, int nranks,
                       void* dense, size_t knownNnz, size_t* outputNnz);

}  // namespace spccl::sparse

// Every sparse all-reduce algorithm, registered once: the name that logs,
// stats, the perf binaries, the interposer and spcclSparseAlgorithmName
// print, a description, the planner's cost model (planner.h) and the
// schedule that runs it (sparse_algorithms.h). Adding an algorithm is
// adding a row here (and its enumerator in spccl.h).
#pragma once

#include <span>

#include "sparse/sparse_algorithms.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparseCost;
struct SparseCostInput;
using SparseCostFunction = SparseCost (*)(const SparseCostInput& input);

struct SparseAlgorithmInfo {
  spcclSparseAlgorithm_t id;
  const char* name;
  const char* description;
  SparseCostFunction cost;
  // The schedule on the ranks' sets of non-zeros; nullptr for dense, which
  // reduces the whole tensor instead (runDense, sparse_allreduce.cc).
  SparseSchedule run;
};

// In the planner's order of preference: a tie goes to the earlier row.
// spcclSparseAuto has no row: it asks the planner to choose among these.
std::span<const SparseAlgorithmInfo> sparseAlgorithms();
// The row of `algorithm`; nullptr for spcclSparseAuto.
const SparseAlgorithmInfo* findSparseAlgorithm(spcclSparseAlgorithm_t algorithm);
// "bp", "hc", ...; "auto" for spcclSparseAuto; "unknown" for anything else.
const char* sparseAlgorithmName(spcclSparseAlgorithm_t algorithm);

}  // namespace spccl::sparse

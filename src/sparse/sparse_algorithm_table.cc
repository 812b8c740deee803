#include "sparse/sparse_algorithm_table.h"

#include <iterator>

#include "sparse/planner.h"

namespace spccl::sparse {

namespace {

// The names are an interface: logs, spcclSparseGetStats' readers, the perf
// binaries' -a flag and their JSON reports parse them.
const SparseAlgorithmInfo kAlgorithms[] = {
    {spcclSparseBalancedParallelism, "bp",
     "Zen Balanced Parallelism: push to balanced owners, aggregate, pull (Def. 6, Eq. 1)",
     balancedParallelismCost, balancedParallelism},
    {spcclSparseHierarchical, "hc",
     "Zen Hierarchical Centralization: recursive doubling with merging (Def. 7, Eq. 2)",
     hierarchicalCentralizationCost, hierarchicalCentralization},
    {spcclSparseAllGather, "agsparse", "AGsparse baseline: all-gather of every set, one-shot sum",
     allGatherSparseCost, allGatherSparse},
    {spcclSparseBlock, "block", "OmniReduce-style 256-element blocks over even owners",
     blockSparseCost, blockSparse},
    {spcclSparseDense, "dense", "dense all-reduce of the whole tensor", denseAllReduceCost,
     nullptr},
};
static_assert(std::size(kAlgorithms) == spcclSparseNumAlgorithms - 1,
              "every spcclSparseAlgorithm_t but Auto has a row");

}  // namespace

std::span<const SparseAlgorithmInfo> sparseAlgorithms() { return kAlgorithms; }

const SparseAlgorithmInfo* findSparseAlgorithm(spcclSparseAlgorithm_t algorithm) {
  for (const SparseAlgorithmInfo& a : kAlgorithms)
    if (a.id == algorithm) return &a;
  return nullptr;
}

const char* sparseAlgorithmName(spcclSparseAlgorithm_t algorithm) {
  if (algorithm == spcclSparseAuto) return "auto";
  const SparseAlgorithmInfo* info = findSparseAlgorithm(algorithm);
  return info != nullptr ? info->name : "unknown";
}

}  // namespace spccl::sparse

// The first message round of every sparse all-reduce: each rank tells every
// other its non-zero count, what it asked for (algorithm, encoding,
// partitioner, tag), whether its own input was valid, and (first call of a
// tag) its overlap sketch. Every rank sees every rank's header, so a
// mismatch fails the call on all ranks at once, with the same message and
// no hang; the counts make density agreed, hence the planner's choice.
// The exchange runs in the call's own context: its frames carry the
// SparseAllReduce signature (count, datatype, op), which the engine checks.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/coll_context.h"
#include "sparse/overlap_sketch.h"
#include "sparse/sparse_algorithms.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparseCallHeader {
  uint64_t nnz = 0;
  uint64_t tag = 0;
  int32_t algorithm = 0;
  int32_t encoding = 0;
  int32_t partitioner = 0;
  int32_t inputValid = 1;  // 0: this rank's input was rejected (it reports why)
  OverlapSketch sketch;
  // This rank's gamma of each HC stage in the tag's previous call (its sent
  // set over that call's mean nnz; 0 stages: none), so that every rank
  // learns the same gamma(2^stage) (planner.h, learnStageGammas).
  int32_t mergeStages = 0;
  double stageGamma[kMaxMergeStages] = {};
  // The algorithm this rank ran in the tag's previous call and its seconds
  // (-1: none kept), for the measured times of planner.h.
  int32_t lastAlgorithm = -1;
  double lastSeconds = 0;
  int32_t useMeasuredTimes = 0;  // SPCCL_SPARSE_MEASURED_TIMES on this rank
};

// all gets nranks headers. Fails (spcclInvalidUsage, on every rank) when a
// rank's input was invalid or the ranks asked for different things.
spcclResult_t agreeOnCall(CollContext& ctx, const SparseCallHeader& mine,
                          std::vector<SparseCallHeader>* all);

}  // namespace spccl::sparse

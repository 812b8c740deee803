// The sparse all-reduce algorithms (docs/algorithms.md 2), as schedules on
// CollContext. Each takes one rank's deduplicated non-zeros and delivers
// the global sum as a SparseSet of global indices (ascending unless the
// caller said order does not matter; a value may be zero where x + -x
// cancelled), bit for bit the same on every rank. The
// caller turns it into the dense or COO output (sparse_output.h), so no
// schedule touches the dense tensor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/coll_context.h"
#include "sparse/bucketing.h"
#include "sparse/encoding.h"
#include "sparse/index_partition.h"
#include "sparse/pair_source.h"
#include "sparse/sparse_set.h"
#include "sparse/sparse_workspace.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparseInput {
  const uint64_t* indices = nullptr;  // unique, ascending
  const void* values = nullptr;
  size_t nnz = 0;
  uint64_t universe = 0;  // M
  spcclDataType_t type = spcclFloat32;
  // Every rank's nnz (nranks entries), agreed by the caller's exchange, so
  // receivers bound each message by what its sender can hold instead of by
  // the dense size. nullptr: the algorithm exchanges the counts itself.
  const uint64_t* rankNnz = nullptr;
  // The communicator's reusable buffers (nullptr: the algorithm allocates).
  SparseWorkspace* workspace = nullptr;
  // false: the caller only scatters the result into a dense tensor, so a
  // schedule that joins disjoint partitions (BP's pull) may leave them in
  // partition order instead of sorting the whole output by index.
  bool sortedResult = true;
  // The caller's dense input (universe values) when it has one: the pairs
  // above are its non-zeros. Read only by the dense fallback
  // (ordered_dense_allreduce.h), which sends its slices as they are.
  const void* denseInput = nullptr;
  // The caller's dense output (universe values), or nullptr for a COO
  // output. A schedule may reduce into it and set the result's
  // inDenseOutput; the input pairs above never point into it.
  void* denseOutput = nullptr;
  // Where Balanced Parallelism's push buckets come from instead of
  // bucketByOwner (the device sparse call's); nullptr: bucketByOwner.
  PairBucketer* bucketer = nullptr;
  // Where the pairs above are while indices is nullptr (nnz is set): on
  // the device, brought to the host only by a schedule that reads them
  // (pair_source.h). Only Balanced Parallelism gets such an input, with a
  // bucketer; every other schedule's caller fetched them.
  PairSource* pairSource = nullptr;
};

struct SparseRunOptions {
  unsigned allowedEncodings = kAllEncodings;  // bit mask of 1 << Encoding
  PartitionKind partition = PartitionKind::Permutation;
  BucketMethod bucketing = BucketMethod::TwoPass;
  uint64_t seed = 0;  // h0 / permutation key, the same on every rank
  // About how many bytes a pipelined schedule's message piece carries
  // (SPCCL_SPARSE_PIECE_BYTES, sparse/message_pieces.h); 0: one piece.
  uint64_t pieceBytes = 0;
};

// Recursive-doubling stages a report and a profile keep (2^16 ranks).
constexpr int kMaxMergeStages = 16;

struct SparseRunReport {
  uint64_t bytesSent = 0;  // payload bytes this rank sent
  uint64_t bytesReceived = 0;
  double pushImbalance = 1.0;  // Zen Def. 8 (BP only)
  double pullImbalance = 1.0;
  // HC only: the size of the set this rank sent in each recursive-doubling
  // stage (its merged set of 2^stage ranks), from which the planner learns
  // gamma(2^stage) of Eq. (2).
  int mergeStages = 0;
  uint64_t stageSetNnz[kMaxMergeStages] = {};
};

// The schedules' common signature: sparse_algorithm_table.h registers each
// under its spcclSparseAlgorithm_t.
using SparseSchedule = spcclResult_t (*)(CollContext& ctx, const SparseInput& in,
                                         const SparseRunOptions& options, SparseSet* result,
                                         SparseRunReport* report);

spcclResult_t balancedParallelism(CollContext& ctx, const SparseInput& in,
                                  const SparseRunOptions& options, SparseSet* result,
                                  SparseRunReport* report);
spcclResult_t hierarchicalCentralization(CollContext& ctx, const SparseInput& in,
                                         const SparseRunOptions& options, SparseSet* result,
                                         SparseRunReport* report);
spcclResult_t allGatherSparse(CollContext& ctx, const SparseInput& in,
                              const SparseRunOptions& options, SparseSet* result,
                              SparseRunReport* report);
spcclResult_t blockSparse(CollContext& ctx, const SparseInput& in, const SparseRunOptions& options,
                          SparseSet* result, SparseRunReport* report);

}  // namespace spccl::sparse

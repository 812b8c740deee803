// One sparse all-reduce call after the API layer validated its arguments:
// agree on the call (call_agreement.h), plan (planner.h), run the chosen
// algorithm, finish (Avg, COO output) and record what happened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/coll_context.h"
#include "sparse/sparse_set.h"
#include "spccl.h"

namespace spccl::sparse {

class PairBucketer;
class PairSource;

struct SparseOptions {
  spcclSparseAlgorithm_t algorithm = spcclSparseAuto;
  uint64_t tag = 0;
  spcclSparseEncoding_t encoding = spcclEncodingAuto;
  spcclSparsePartitioner_t partitioner = spcclPartitionAuto;
};

// The result as the call produced it, for a caller that writes its dense
// output itself (core/device_sparse_call.h: zeros, then these pairs, on the
// device) and so needs no dense host output where the result is sparse.
struct SparseResult {
  // Global indices in any order, unique; Avg divided. Every value the
  // dense output would hold at those indices, bits as they are: a pair that
  // cancelled to +0 may stay, -0.0 (Avg's division underflowing) stays.
  // Zeros elsewhere.
  SparseSet pairs;
  // Or, where the result came dense: count values, the bits the dense
  // output would hold, in the communicator's workspace (valid until its
  // next sparse call). So for the dense algorithm, whose -0.0 sums pairs
  // would lose, and where the ranks' pairs together would outweigh the
  // dense tensor (the schedules' dense routes, as for a dense output).
  const void* dense = nullptr;
};

struct SparseCall {
  const char* name = "spcclSparseAllReduce";
  size_t count = 0;
  spcclDataType_t type = spcclFloat32;
  spcclRedOp_t op = spcclSum;  // Sum or Avg
  SparseOptions options;
  // Input: a dense buffer of count elements, or (denseInput == nullptr) a
  // canonical COO set: indices unique and ascending, no zero values.
  const void* denseInput = nullptr;
  std::vector<uint64_t> indices;
  std::vector<unsigned char> values;
  // The input's non-zeros, whichever form it came in (set by the run: the
  // COO vectors above, or the dense input extracted into the workspace).
  const uint64_t* nonZeroIndices = nullptr;
  const unsigned char* nonZeroValues = nullptr;
  size_t nnz = 0;
  // false: this rank's input was rejected (its error is already recorded);
  // it still takes part in the agreement so that no peer waits for it.
  bool inputValid = true;
  // Output: a dense buffer of count elements, or COO with ascending indices.
  bool cooOutput = false;
  void* denseOutput = nullptr;
  spcclIndexType_t outIndexType = spcclIndexUint64;
  void* outIndices = nullptr;
  void* outValues = nullptr;
  size_t outCapacity = 0;
  size_t* outNnz = nullptr;
  // Internal output form (not reachable from the API): the result into
  // *resultOut, as pairs or dense (SparseResult); denseOutput and the COO
  // output are then ignored. Same algorithm and bits as the dense output.
  SparseResult* resultOut = nullptr;
  // Internal: Balanced Parallelism's push buckets from here instead of
  // its own bucketing (sparse/bucketing.h; the device sparse call's, from
  // the pairs above as they lie on the GPU). nullptr: the host buckets.
  PairBucketer* bucketer = nullptr;
  // Internal: the input's pairs are not on the host yet (the device sparse
  // call's, on the GPU; sparse/pair_source.h): nnz is set, nonZeroIndices
  // stays nullptr until a schedule needs them on the host. The first call
  // of an auto tag fetches them before the agreement, for its sketch.
  PairSource* pairSource = nullptr;
};

struct CommState;

// The frames' signature of the call (count, datatype, op), which the engine
// checks on every message.
CollSignature signatureOf(const SparseCall& call);

// Runs on a context begun with signatureOf(call) (the caller holds the
// engine: core/comm.h, runCollectiveBlocking).
spcclResult_t runSparseAllReduce(CollContext& ctx, CommState& state, SparseCall& call);

}  // namespace spccl::sparse

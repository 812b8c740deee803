// One sparse all-reduce call after the API layer validated its arguments:
// agree on the call (call_agreement.h), plan (planner.h), run the chosen
// algorithm, finish (Avg, COO output) and record what happened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/comm.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparseOptions {
  spcclSparseAlgorithm_t algorithm = spcclSparseAuto;
  uint64_t tag = 0;
  spcclSparseEncoding_t encoding = spcclEncodingAuto;
  spcclSparsePartitioner_t partitioner = spcclPartitionAuto;
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
};

// Runs on the communicator's engine (the caller holds it, via runBlocking).
spcclResult_t runSparseAllReduce(spcclComm_t comm, SparseCall& call);

}  // namespace spccl::sparse

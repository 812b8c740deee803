// Where each NCCL call goes. The decision uses only what NCCL requires to
// be the same on every rank of a call (count, datatype, op, the
// communicator's size) and the process-wide knobs (settings.h), so every
// rank takes the same path. Whether the data is sparse enough is decided
// inside spcclSparseAllReduce by its planner, from counts the ranks
// exchanged (src/sparse/call_agreement.h), never from rank-local data.
// One input is rank-local: where the buffers live (memory_kind.h). NCCL
// programs pass device buffers on every rank or on none. Device buffers go
// to the real NCCL in forward mode; in replace mode they take the same
// routes as host buffers (spccl takes device memory and streams).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>

#include "settings.h"
#include "spccl.h"

namespace spccl::nccl {

enum class Target {
  SpcclSparse,      // spcclSparseAllReduce (lossless; its planner may run the dense ring)
  SpcclCompressed,  // spcclCompressedAllReduce (lossy, SPCCL_NCCL_COMPRESS)
  SpcclDense,       // spccl's collective of the same name
  Nccl,             // the real NCCL, arguments unchanged (forward mode)
};

// Why a call did not take the sparse or compressed path.
enum class Reason {
  None,
  NotAllReduce,
  SingleRank,
  NoSpcclType,  // fp8, or not an ncclDataType_t
  NotFloat,
  OpNotSumAvg,  // prod, max, min, a PreMulSum op of the real NCCL, or not an op
  BelowThreshold,
  SparseOff,
  DeviceBuffer,
};

struct CallShape {
  bool allReduce = false;
  int datatype = 0;  // ncclDataType_t's value
  int op = 0;        // ncclRedOp_t's value, after a PreMulSum of spccl's became sum
  size_t bytes = 0;  // count * element size (0 for types spccl does not know)
  int nranks = 1;
  bool deviceBuffers = false;
};

struct Route {
  Target target = Target::SpcclDense;
  Reason reason = Reason::None;
};

// Pure: the same inputs give the same route on every rank.
Route decideRoute(const Settings& settings, const CallShape& call);

// The report's name of a route ("spccl dense (below SPCCL_INTERPOSE_MIN_BYTES)").
std::string pathName(const Route& route, const CompressSetting& compress);
// The report's name of a sparse call, from the algorithm the planner ran.
const char* sparsePathName(spcclSparseAlgorithm_t chosen);

// spccl's element size of an NCCL type; 0 for fp8 and non-types.
size_t elementSize(int datatype);

}  // namespace spccl::nccl

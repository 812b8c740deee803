// Where each NCCL call goes. The decision uses only what NCCL requires to
// be the same on every rank of a call (count, datatype, op, the
// communicator's size) and the process-wide knobs (settings.h), so every
// rank takes the same path. Whether the data is sparse enough is decided
// inside spcclSparseAllReduce by its planner, from counts the ranks
// exchanged (src/sparse/call_agreement.h), never from rank-local data.
// One input is rank-local: where the buffers live (memory_kind.h). NCCL
// programs pass device buffers on every rank or on none. In replace mode
// device buffers take the same routes as host buffers (spccl takes device
// memory and streams). In forward mode the real NCCL runs a dense
// all-reduce of device memory faster than spccl can stage it through host
// memory, so device buffers reach spccl only when it saves much: a
// compressed all-reduce the user opted into, or a sparse one whose data
// the ranks have agreed is sparse enough (density_probe.h measures it; then
// routeByDensity decides, from the agreed value, the same on every rank).
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
  DeviceBuffer,   // forward mode, device buffers, no spccl path for them
  DeviceDense,    // forward mode, device buffers, the agreed density above the threshold
  DeviceInGroup,  // forward mode, device buffers inside a group: no probe there
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
  // Forward mode, device buffers, target SpcclSparse: only if the agreed
  // density is at most SPCCL_NCCL_DEVICE_DENSITY (routeByDensity).
  bool needsDensity = false;
};

// Pure: the same inputs give the same route on every rank. inGroup: the
// call is issued inside ncclGroupStart/End.
Route decideRoute(const Settings& settings, const CallShape& call, bool inGroup = false);

// A route that needsDensity, given the density the ranks agreed on (the
// same number on every rank, so the same answer): sparse at most
// SPCCL_NCCL_DEVICE_DENSITY, else the real NCCL.
Route routeByDensity(const Settings& settings, const Route& route, double agreedDensity);

// The report's name of a route ("spccl dense (below SPCCL_INTERPOSE_MIN_BYTES)").
std::string pathName(const Route& route, const CompressSetting& compress);
// The report's name of a sparse call, from the algorithm the planner ran.
const char* sparsePathName(spcclSparseAlgorithm_t chosen);

// spccl's element size of an NCCL type; 0 for fp8 and non-types.
size_t elementSize(int datatype);

}  // namespace spccl::nccl

// Which MPI_Allreduce calls go to spccl (SPCCL_INTERPOSE), and why the
// others stay on MPI. The decision uses only what MPI guarantees to be the
// same on every rank of the call (count, datatype, op, communicator) and the
// process-wide knobs, so every rank takes the same path; within spccl's
// sparse all-reduce, the planner's choice rests on counts the ranks
// exchanged (src/sparse/call_agreement.h), never on local data alone.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "spccl.h"

namespace spccl::mpi {

enum class Policy {
  Off,     // everything on MPI
  Dense,   // eligible calls through spccl's dense all-reduce
  Sparse,  // eligible calls through spccl's sparse all-reduce, any size
  Auto,    // sparse all-reduce from SPCCL_INTERPOSE_MIN_BYTES on; smaller ones on MPI
};

// off|dense|sparse|auto; false for anything else.
bool parsePolicy(const char* text, Policy* policy);
const char* policyName(Policy policy);

// One row of the report: where a call went, and why when it stayed on MPI.
enum class Path {
  SparseBalancedParallelism,
  SparseHierarchical,
  SparseAllGather,
  SparseBlock,
  SparsePlannerDense,  // sent to the sparse all-reduce, whose planner chose the dense ring
  SpcclDense,
  MpiPolicyOff,
  MpiEmpty,
  MpiBelowThreshold,
  MpiOpNotSum,
  MpiTypeNotRouted,
  MpiIntercomm,
  MpiSingleRank,
  MpiShadowUnavailable,  // spccl could not be set up for this communicator
  MpiNested,             // MPI_Allreduce called from inside the interposer
  Count
};
constexpr int kNumPaths = static_cast<int>(Path::Count);
const char* pathName(Path path);
// The report row of a sparse call, from the algorithm the planner ran.
Path sparsePath(spcclSparseAlgorithm_t chosen);

// spccl's type for a predefined contiguous MPI datatype with a spccl
// equivalent; false for everything else (derived types, dups, pair types
// like MPI_FLOAT_INT, types without a spccl twin such as MPI_SHORT).
bool spcclTypeOf(MPI_Datatype datatype, spcclDataType_t* type);

struct CallShape {
  int count = 0;
  size_t bytes = 0;  // count * element size; 0 when the type is not routed
  bool opIsSum = false;
  bool typeRouted = false;
  bool intercomm = false;
  int commSize = 1;
};

struct Route {
  enum class Target { Mpi, SpcclDense, SpcclSparse } target = Target::Mpi;
  Path mpiReason = Path::MpiPolicyOff;  // when target is Mpi
};

// Pure: the same inputs give the same route on every rank.
Route decideRoute(Policy policy, size_t minBytes, const CallShape& call);

}  // namespace spccl::mpi

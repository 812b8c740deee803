// What a communicator keeps from one sparse all-reduce to the next: the
// shared hashing seed, the planner's per-tag profiles and the reused
// buffers. Owned by src/sparse; the communicator holds it without knowing
// its type (core/comm.h).
#pragma once

#include <cstdint>

#include "sparse/planner.h"
#include "sparse/sparse_workspace.h"

namespace spccl::sparse {

struct CommState {
  // The key of h0 and of the index permutation must be the same on every
  // rank; Zen has rank 0 draw it and broadcast it. The communicator id
  // already is a random value drawn once by the id's creator and known to
  // every rank, so mixing it gives that seed with no extra message.
  explicit CommState(uint64_t commId);

  uint64_t seed;
  // The planner's per-tag profile (density, densification, decisions).
  PlannerState planner;
  // Buffers sparse calls reuse from call to call (engine thread only).
  SparseWorkspace workspace;
};

}  // namespace spccl::sparse

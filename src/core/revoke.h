// Revoking a communicator (spcclCommRevoke), as ULFM's MPI_Comm_revoke:
// every pending and later call on it, on every rank, fails with
// spcclRevoked. Pending calls hear of it through the engine's abort frames
// (runtime/engine.h), which end their waits at once; every rank's fault
// service (core/fault_service.h) records it and relays it, so that ranks
// between calls, and ranks the revoker could not reach, learn it too.
#pragma once

#include "spccl.h"

namespace spccl {

// Idempotent; returns once the local state is revoked (the relay runs on).
spcclResult_t revokeComm(spcclComm_t comm);

// At the API boundary: a failed call on a revoked communicator returns
// spcclRevoked (with the revoke's reason).
spcclResult_t revokedResult(spcclComm_t comm, spcclResult_t result);

// Before a call: spcclRevoked when the communicator is revoked.
spcclResult_t failIfRevoked(spcclComm_t comm);

}  // namespace spccl

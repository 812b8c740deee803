// spccl failures as MPI errors: the error class closest to spccl's result,
// raised through the communicator's error handler (fatal by default, as
// for any MPI error), with spccl's own message in the log.
#pragma once

#include <mpi.h>

#include "base/c_boundary.h"
#include "spccl.h"

namespace spccl::mpi {

int mpiErrorClassOf(spcclResult_t result);
// Logs `what` and spccl's message, calls comm's error handler, and returns
// the MPI error code for MPI_Allreduce to return (when the handler returns).
int raiseSpcclError(MPI_Comm comm, spcclComm_t shadow, spcclResult_t result, const char* what);

// A C++ exception the interposer met (memory ran out: MPI_ERR_NO_MEM; any
// other: MPI_ERR_INTERN), raised the same way; comm may be MPI_COMM_NULL
// (no handler to call).
int raiseCaught(MPI_Comm comm, const char* call, bool outOfMemory, const char* what) noexcept;

// What every MPI entry point of the interposer runs its body through: no
// C++ exception crosses into the MPI program (base/c_boundary.h).
template <typename Body>
int guardMpiEntry(const char* call, MPI_Comm comm, Body&& body) noexcept {
  return catchAtCBoundary(body, [call, comm](bool outOfMemory, const char* what) {
    return raiseCaught(comm, call, outOfMemory, what);
  });
}

}  // namespace spccl::mpi

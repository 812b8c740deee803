// spccl failures as MPI errors: the error class closest to spccl's result,
// raised through the communicator's error handler (fatal by default, as
// for any MPI error), with spccl's own message in the log.
#pragma once

#include <mpi.h>

#include "spccl.h"

namespace spccl::mpi {

int mpiErrorClassOf(spcclResult_t result);
// Logs `what` and spccl's message, calls comm's error handler, and returns
// the MPI error code for MPI_Allreduce to return (when the handler returns).
int raiseSpcclError(MPI_Comm comm, spcclComm_t shadow, spcclResult_t result, const char* what);

}  // namespace spccl::mpi

// One spccl communicator per MPI communicator ("shadow"), created at the
// first routed call (collective: every rank of the MPI communicator makes
// the same routing decision, so they all get here together) and cached as
// an attribute of the MPI communicator. MPI calls the attribute's delete
// callback when the communicator is freed; MPI_Finalize drops the rest.
#pragma once

#include <mpi.h>

#include "spccl.h"

namespace spccl::mpi {

struct ShadowComm {
  MPI_Comm mpiComm = MPI_COMM_NULL;
  // nullptr: creation failed on some rank; calls on this communicator stay
  // on MPI (every rank knows, since the outcome was agreed).
  spcclComm_t comm = nullptr;
};

// Creates the attribute keyval (after MPI_Init).
int setupShadowKeyval();
// The communicator's shadow, created on first use (after setupShadowKeyval
// succeeded; the interposer routes nothing otherwise). Returns an MPI error
// code when MPI itself failed; spccl failing leaves (*shadow)->comm NULL.
int shadowOf(MPI_Comm comm, ShadowComm** shadow);
// Destroys the communicator's shadow now, if it has one (MPI_Comm_free).
int dropShadow(MPI_Comm comm);
// Destroys every remaining shadow and frees the keyval (MPI_Finalize).
void dropAllShadows();

}  // namespace spccl::mpi

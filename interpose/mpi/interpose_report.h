// SPCCL_INTERPOSE_REPORT=1: calls, bytes and time of MPI_Allreduce per path
// (report rows: routing.h), printed by rank 0 of MPI_COMM_WORLD at
// MPI_Finalize. Calls and bytes are rank 0's (every rank routes alike; a
// row where ranks disagree says so), time is the slowest rank's total.
#pragma once

#include <cstddef>

#include "routing.h"

namespace spccl::mpi {

void recordCall(Path path, size_t bytes, double seconds);
// Collective over MPI_COMM_WORLD; call inside MPI_Finalize, before PMPI_Finalize.
void printReport(Policy policy, size_t minBytes);

}  // namespace spccl::mpi

// The MPI family this interposer was compiled against. Handles, MPI_IN_PLACE
// and the predefined objects differ between families (Open MPI: pointers to
// library globals, MPI_IN_PLACE (void*)1; MPICH: ints, (void*)-1), so one
// build serves one family, and the interposer turns itself off when it is
// loaded into a process whose MPI library is of another family.
#pragma once

#include <mpi.h>

#if defined(OPEN_MPI)
#define SPCCL_MPI_FAMILY "Open MPI"
#elif defined(MPICH_VERSION)
#define SPCCL_MPI_FAMILY "MPICH"
#else
#define SPCCL_MPI_FAMILY "an MPI"
#endif

namespace spccl::mpi {

// True when the running MPI library (MPI_Get_library_version) is of the
// family this build targets; fills `running` with its version line.
bool runningFamilyMatches(char* running, int capacity);

}  // namespace spccl::mpi

#include "mpi_errors.h"

#include "base/log.h"

namespace spccl::mpi {

int mpiErrorClassOf(spcclResult_t result) {
  switch (result) {
    case spcclSuccess:
      return MPI_SUCCESS;
    case spcclInvalidArgument:
      return MPI_ERR_ARG;
    case spcclInternalError:
      return MPI_ERR_INTERN;
    case spcclInvalidUsage:  // e.g. ranks passed different counts
    case spcclSystemError:
    case spcclRemoteError:
    case spcclTimeout:
    case spcclRevoked:
    default:
      return MPI_ERR_OTHER;
  }
}

int raiseSpcclError(MPI_Comm comm, spcclComm_t shadow, spcclResult_t result, const char* what) {
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  SPCCL_WARN("MPI interposer: %s failed on rank %d of its communicator: %s: %s", what, rank,
             spcclGetErrorString(result), spcclGetLastError(shadow));
  const int code = mpiErrorClassOf(result);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int raiseCaught(MPI_Comm comm, const char* call, bool outOfMemory, const char* what) noexcept {
  const int code = outOfMemory ? MPI_ERR_NO_MEM : MPI_ERR_INTERN;
  try {
    SPCCL_WARN("MPI interposer: %s failed: %s", call, what);
  } catch (...) {
    // The log's first use sets it up, which may allocate: still raised.
  }
  if (comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace spccl::mpi

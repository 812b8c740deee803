// The MPI entry points of libspccl_mpi_interpose.so (PMPI profiling
// interface): LD_PRELOAD puts these definitions ahead of libmpi's, and
// everything the interposer does itself goes through PMPI_*, so it never
// re-enters itself. Only these five symbols are exported (interpose.map).
#include <mpi.h>

#include <cstddef>
#include <mutex>

#include "base/knobs.h"
#include "base/log.h"
#include "interpose_report.h"
#include "mpi_errors.h"
#include "mpi_family.h"
#include "routing.h"
#include "shadow_comm.h"

using namespace spccl;
using namespace spccl::mpi;

namespace {

struct Settings {
  Policy policy = Policy::Off;
  size_t minBytes = 0;
  bool report = false;
};

std::once_flag gSetupOnce;
Settings gSettings;

// Read the knobs and create the keyval, once, after MPI_Init (or at the
// first call, for programs whose MPI_Init did not come through here, such
// as Fortran ones on some MPIs).
const Settings& settings() {
  std::call_once(gSetupOnce, [] {
    const std::string policy = knobString("SPCCL_INTERPOSE");
    if (!parsePolicy(policy.c_str(), &gSettings.policy)) {
      SPCCL_WARN(
          "MPI interposer: SPCCL_INTERPOSE=%s is not one of off, dense, sparse, auto; "
          "every MPI_Allreduce stays on MPI",
          policy.c_str());
      gSettings.policy = Policy::Off;
    }
    const int64_t minBytes = knobInt("SPCCL_INTERPOSE_MIN_BYTES");
    gSettings.minBytes = minBytes > 0 ? static_cast<size_t>(minBytes) : 0;
    gSettings.report = knobInt("SPCCL_INTERPOSE_REPORT") != 0;
    char running[256];
    if (!runningFamilyMatches(running, sizeof(running))) {
      SPCCL_WARN(
          "MPI interposer: built for %s but the running MPI is \"%s\"; "
          "every MPI_Allreduce stays on MPI",
          SPCCL_MPI_FAMILY, running);
      gSettings.policy = Policy::Off;
    }
    if (setupShadowKeyval() != MPI_SUCCESS) {
      SPCCL_WARN("MPI interposer: MPI_Comm_create_keyval failed; every MPI_Allreduce stays on MPI");
      gSettings.policy = Policy::Off;
    }
    SPCCL_INFO(kLogInit, "MPI interposer for %s (running: %s): SPCCL_INTERPOSE=%s, min bytes %zu",
               SPCCL_MPI_FAMILY, running, policyName(gSettings.policy), gSettings.minBytes);
  });
  return gSettings;
}

// Set while this thread is inside the interposer: an MPI_Allreduce reached
// from there (a library calling back into MPI) goes straight to MPI.
thread_local bool tInside = false;

struct InsideInterposer {
  InsideInterposer() { tInside = true; }
  ~InsideInterposer() { tInside = false; }
};

CallShape shapeOf(int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  spcclDataType_t* type) {
  CallShape shape;
  shape.count = count;
  shape.opIsSum = op == MPI_SUM;
  shape.typeRouted = spcclTypeOf(datatype, type);
  int typeSize = 0;
  if (count > 0 && PMPI_Type_size(datatype, &typeSize) == MPI_SUCCESS && typeSize > 0)
    shape.bytes = static_cast<size_t>(count) * static_cast<size_t>(typeSize);
  int inter = 0;
  // An invalid communicator counts as an intercommunicator: the call goes
  // to MPI, which reports the error as it would without the interposer.
  shape.intercomm = PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter != 0;
  if (!shape.intercomm) PMPI_Comm_size(comm, &shape.commSize);
  return shape;
}

int stayOnMpi(Path reason, size_t bytes, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const double start = PMPI_Wtime();
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  recordCall(reason, bytes, PMPI_Wtime() - start);
  return rc;
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  return guardMpiEntry("MPI_Init", MPI_COMM_WORLD, [] {
    settings();
    return MPI_SUCCESS;
  });
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  return guardMpiEntry("MPI_Init_thread", MPI_COMM_WORLD, [] {
    settings();
    return MPI_SUCCESS;
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  if (tInside) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  return guardMpiEntry("MPI_Allreduce", comm, [&] {
    InsideInterposer inside;
    const Settings& s = settings();
    spcclDataType_t type = spcclFloat32;
    const CallShape shape = shapeOf(count, datatype, op, comm, &type);
    const Route route = decideRoute(s.policy, s.minBytes, shape);
    if (route.target == Route::Target::Mpi)
      return stayOnMpi(route.mpiReason, shape.bytes, sendbuf, recvbuf, count, datatype, op, comm);

    const double start = PMPI_Wtime();
    ShadowComm* shadow = nullptr;
    int rc = shadowOf(comm, &shadow);
    if (rc != MPI_SUCCESS) {
      PMPI_Comm_call_errhandler(comm, rc);
      return rc;
    }
    if (shadow->comm == nullptr)
      return stayOnMpi(Path::MpiShadowUnavailable, shape.bytes, sendbuf, recvbuf, count, datatype,
                       op, comm);
    const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const size_t n = static_cast<size_t>(count);
    Path path = Path::SpcclDense;
    spcclResult_t result;
    if (route.target == Route::Target::SpcclDense) {
      result = spcclAllReduce(send, recvbuf, n, type, spcclSum, shadow->comm, nullptr);
    } else {
      result = spcclSparseAllReduce(send, recvbuf, n, type, spcclSum, shadow->comm, nullptr);
      spcclSparseStats_t stats{};
      stats.size = sizeof(stats);
      // Tag 0: the call just made (keyed by count); stats.algorithm is what ran.
      if (result == spcclSuccess && spcclSparseGetStats(shadow->comm, 0, &stats) == spcclSuccess)
        path = sparsePath(stats.algorithm);
    }
    if (result != spcclSuccess)
      return raiseSpcclError(comm, shadow->comm, result,
                             route.target == Route::Target::SpcclDense
                                 ? "MPI_Allreduce (spccl dense)"
                                 : "MPI_Allreduce (spccl sparse)");
    recordCall(path, shape.bytes, PMPI_Wtime() - start);
    return MPI_SUCCESS;
  });
}

// The spccl communicator goes first, while the MPI one is still whole
// (PMPI_Comm_free would also run the attribute's delete callback). MPI's
// communicator is freed even where spccl's could not be (logged).
int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr)
    guardMpiEntry("MPI_Comm_free", MPI_COMM_NULL, [comm] {
      dropShadow(*comm);
      return MPI_SUCCESS;
    });
  return PMPI_Comm_free(comm);
}

int MPI_Finalize(void) {
  guardMpiEntry("MPI_Finalize", MPI_COMM_NULL, [] {
    const Settings& s = settings();
    if (s.report) printReport(s.policy, s.minBytes);
    dropAllShadows();
    return MPI_SUCCESS;
  });
  return PMPI_Finalize();
}

}  // extern "C"

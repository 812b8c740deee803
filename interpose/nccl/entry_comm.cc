// Entry points of communicators: creation, queries, life cycle, buffer
// registration.
#include <nccl.h>

#include <memory>
#include <mutex>

#include "comm_entry.h"
#include "comm_lifecycle.h"
#include "entry_guard.h"
#include "errors.h"
#include "interposed_comm.h"
#include "profiling_alias.h"
#include "real_nccl.h"
#include "settings.h"

using namespace spccl::nccl;

namespace {

// A new registration's handle (replace mode).
void* addRegistration(InterposedComm* comm, void* buff, size_t size) {
  auto registration = std::make_unique<Registration>(Registration{buff, size});
  void* handle = registration.get();
  std::lock_guard<std::mutex> lock(comm->mutex);
  comm->registrations[handle] = std::move(registration);
  return handle;
}

bool dropRegistration(InterposedComm* comm, const void* handle) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  return comm->registrations.erase(handle) == 1;
}

// ncclCommDestroy and ncclCommAbort (abort) after their pass-back: a
// handle that is not ours goes to the real NCCL in forward mode
// (forwardToReal), else is an invalid argument named after call.
template <typename ForwardToReal>
ncclResult_t unregisterAndDestroy(ncclComm_t comm, const char* call, bool abort,
                                  ForwardToReal forwardToReal) {
  if (comm == nullptr && !forwarding()) return ncclSuccess;  // as NCCL
  std::shared_ptr<InterposedComm> mine = unregisterComm(comm);
  if (mine == nullptr) {
    if (forwarding()) return forwardToReal();
    return fail(nullptr, ncclInvalidArgument, "%s: comm %p is %s", call, static_cast<void*>(comm),
                "not a communicator of libspccl_nccl.so (or destroyed)");
  }
  return destroy(mine, abort);
}

}  // namespace

extern "C" {

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommInitRankConfig, comm, nranks, commId, rank, config);
    settings();
    return initRank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommInitRankConfig)

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommInitRank, comm, nranks, commId, rank);
    settings();
    return initRank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommInitRank)

// Every id names a rendezvous; spccl needs one, so the first serves (the
// others' rendezvous roots give up after 5 * SPCCL_TIMEOUT_MS).
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId* commIds, ncclConfig_t* config) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config);
    settings();
    if (nId < 1 || commIds == nullptr)
      return fail(nullptr, ncclInvalidArgument, "ncclCommInitRankScalable: nId %d, commIds %p", nId,
                  static_cast<void*>(commIds));
    return initRank(newcomm, nranks, commIds[0], myrank, config, "ncclCommInitRankScalable");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommInitRankScalable)

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommInitAll, comm, ndev, devlist);
    settings();
    return initAll(comm, ndev, devlist);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommInitAll)

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommSplit, comm, color, key, newcomm, config);
    SPCCL_FIND_COMM(mine, comm, "ncclCommSplit", CommSplit, comm, color, key, newcomm, config);
    return split(mineLease, color, key, newcomm, config);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommSplit)

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config,
                    shrinkFlags);
    SPCCL_FIND_COMM(mine, comm, "ncclCommShrink", CommShrink, comm, excludeRanksList,
                    excludeRanksCount, newcomm, config, shrinkFlags);
    return shrink(mineLease, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommShrink)

// spccl's calls complete before they return: nothing is in flight. As
// NCCL, finalizing twice or after a revoke is an invalid argument.
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommFinalize, comm);
    SPCCL_FIND_COMM(mine, comm, "ncclCommFinalize", CommFinalize, comm);
    if (mine->revoked.load())
      return fail(mine, ncclInvalidArgument,
                  "ncclCommFinalize: the communicator was revoked (ncclCommRevoke); destroy or "
                  "shrink it");
    if (mine->finalized.exchange(true))
      return fail(mine, ncclInvalidArgument,
                  "ncclCommFinalize: the communicator is finalized already");
    SPCCL_REAL_OR(CommFinalize, mine->real);
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommFinalize)

// The handle is unregistered first, so that no call starts on it; calls
// of other threads still inside are waited for (ncclCommAbort stops them
// first): comm_lifecycle.h.
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommDestroy, comm);
    return unregisterAndDestroy(comm, "ncclCommDestroy", false,
                                [comm] { return SPCCL_FORWARD(realNccl(), CommDestroy, comm); });
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommDestroy)

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommAbort, comm);
    return unregisterAndDestroy(comm, "ncclCommAbort", true,
                                [comm] { return SPCCL_FORWARD(realNccl(), CommAbort, comm); });
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommAbort)

// spcclCommRevoke on every rank of the communicator (NCCL's revoke stays
// on the calling rank; revoking on every rank, as NCCL programs do, is
// harmless). Later calls on it fail with ncclInvalidUsage, as NCCL's;
// destroy, abort and shrink work (split does not: spccl shrinks a revoked
// communicator but does not split it).
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommRevoke, comm, revokeFlags);
    if (comm == nullptr && !forwarding()) return ncclSuccess;  // as NCCL
    SPCCL_FIND_COMM(mine, comm, "ncclCommRevoke", CommRevoke, comm, revokeFlags);
    return revoke(mine, revokeFlags);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommRevoke)

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommGetAsyncError, comm, asyncError);
    SPCCL_FIND_COMM(mine, comm, "ncclCommGetAsyncError", CommGetAsyncError, comm, asyncError);
    if (asyncError == nullptr)
      return fail(mine, ncclInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL");
    // spccl's (a stream-ordered call that failed after it returned), else
    // the interposer's sticky one.
    spcclResult_t spcclError = spcclSuccess;
    const bool asked = spcclCommGetAsyncError(mine->spccl, &spcclError) == spcclSuccess;
    if (asked && spcclError != spcclSuccess && spcclError != spcclInProgress)
      mine->asyncError.store(toNcclResult(spcclError));
    auto ours = static_cast<ncclResult_t>(mine->asyncError.load());
    // A non-blocking creation (or finalize) still running.
    if (asked && spcclError == spcclInProgress && ours == ncclSuccess) ours = ncclInProgress;
    if (forwarding()) {
      const ncclResult_t r = SPCCL_FORWARD(realNccl(), CommGetAsyncError, mine->real, asyncError);
      if (r == ncclSuccess && *asyncError == ncclSuccess) *asyncError = ours;
      return r;
    }
    *asyncError = ours;
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommGetAsyncError)

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommCount, comm, count);
    SPCCL_FIND_COMM(mine, comm, "ncclCommCount", CommCount, comm, count);
    if (count == nullptr) return fail(mine, ncclInvalidArgument, "ncclCommCount: count is NULL");
    *count = mine->nranks;
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommCount)

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommUserRank, comm, rank);
    SPCCL_FIND_COMM(mine, comm, "ncclCommUserRank", CommUserRank, comm, rank);
    if (rank == nullptr) return fail(mine, ncclInvalidArgument, "ncclCommUserRank: rank is NULL");
    *rank = mine->rank;
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommUserRank)

// Replace mode: the device spccl's communicator works on
// (spcclCommCuDevice), else the CUDA device current when the communicator
// was made (ncclCommInitAll: the device of its slot); -1 where there is
// no CUDA.
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommCuDevice, comm, device);
    SPCCL_FIND_COMM(mine, comm, "ncclCommCuDevice", CommCuDevice, comm, device);
    SPCCL_REAL_OR(CommCuDevice, mine->real, device);
    if (device == nullptr)
      return fail(mine, ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
    int spcclDevice = -1;
    *device = spcclCommCuDevice(mine->spccl, &spcclDevice) == spcclSuccess && spcclDevice >= 0
                  ? spcclDevice
                  : mine->cudaDevice;
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommCuDevice)

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommRegister, comm, buff, size, handle);
    SPCCL_FIND_COMM(mine, comm, "ncclCommRegister", CommRegister, comm, buff, size, handle);
    SPCCL_REAL_OR(CommRegister, mine->real, buff, size, handle);
    if (handle == nullptr || (buff == nullptr && size > 0))
      return fail(mine, ncclInvalidArgument, "ncclCommRegister: buff %p, size %zu, handle %p", buff,
                  size, static_cast<void*>(handle));
    *handle = addRegistration(mine, buff, size);
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommRegister)

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommDeregister, comm, handle);
    SPCCL_FIND_COMM(mine, comm, "ncclCommDeregister", CommDeregister, comm, handle);
    SPCCL_REAL_OR(CommDeregister, mine->real, handle);
    if (dropRegistration(mine, handle)) return ncclSuccess;
    return fail(mine, ncclInvalidArgument,
                "ncclCommDeregister: handle %p was not registered on this communicator", handle);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommDeregister)

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommWindowRegister, comm, buff, size, win, winFlags);
    SPCCL_FIND_COMM(mine, comm, "ncclCommWindowRegister", CommWindowRegister, comm, buff, size, win,
                    winFlags);
    SPCCL_REAL_OR(CommWindowRegister, mine->real, buff, size, win, winFlags);
    if (win == nullptr || (buff == nullptr && size > 0))
      return fail(mine, ncclInvalidArgument, "ncclCommWindowRegister: buff %p, size %zu, win %p",
                  buff, size, static_cast<void*>(win));
    *win = reinterpret_cast<ncclWindow_t>(addRegistration(mine, buff, size));
    return ncclSuccess;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommWindowRegister)

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(CommWindowDeregister, comm, win);
    SPCCL_FIND_COMM(mine, comm, "ncclCommWindowDeregister", CommWindowDeregister, comm, win);
    SPCCL_REAL_OR(CommWindowDeregister, mine->real, win);
    void* handle = reinterpret_cast<void*>(win);
    if (dropRegistration(mine, handle)) return ncclSuccess;
    return fail(mine, ncclInvalidArgument,
                "ncclCommWindowDeregister: window %p was not registered on this communicator",
                handle);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclCommWindowDeregister)

}  // extern "C"

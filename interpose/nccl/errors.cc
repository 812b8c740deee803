#include "errors.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>

#include "base/log.h"
#include "entry_guard.h"
#include "interposed_comm.h"

namespace spccl::nccl {

namespace {

// Plain chars: remembering a failure allocates nothing (the failure may
// be that memory ran out), and a thread_local with a destructor would
// make glibc register it with an allocation that aborts the process when
// it fails.
thread_local char tLastError[kLastErrorBytes];
thread_local bool tFailedInSpccl = false;

void remember(InterposedComm* comm, const char* message) {
  std::snprintf(tLastError, sizeof(tLastError), "%s", message);
  tFailedInSpccl = true;
  if (comm == nullptr) return;
  std::lock_guard<std::mutex> lock(comm->mutex);
  std::snprintf(comm->lastError, sizeof(comm->lastError), "%s", message);
  comm->lastErrorFromSpccl = true;
}

}  // namespace

ncclResult_t toNcclResult(spcclResult_t result) {
  switch (result) {
    case spcclSuccess:
      return ncclSuccess;
    case spcclSystemError:
      return ncclSystemError;
    case spcclInternalError:
      return ncclInternalError;
    case spcclInvalidArgument:
      return ncclInvalidArgument;
    case spcclInvalidUsage:
      return ncclInvalidUsage;
    case spcclRemoteError:
      return ncclRemoteError;
    case spcclInProgress:
      return ncclInProgress;
    case spcclTimeout:
#ifdef SPCCL_NCCL_HAS_TIMEOUT
      return ncclTimeout;
#else
      return ncclRemoteError;
#endif
    case spcclRevoked:  // NCCL's calls on a revoked communicator fail as invalid usage
      return ncclInvalidUsage;
    default:
      return ncclInternalError;
  }
}

const char* spcclErrorString(ncclResult_t result) {
  switch (static_cast<int>(result)) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (spccl; ncclGetLastError has the details)";
    case ncclSystemError:
      return "system error (spccl; ncclGetLastError has the details)";
    case ncclInternalError:
      return "internal error (spccl; ncclGetLastError has the details)";
    case ncclInvalidArgument:
      return "invalid argument (spccl; ncclGetLastError says which)";
    case ncclInvalidUsage:
      return "invalid usage (spccl; ncclGetLastError has the details)";
    case ncclRemoteError:
      return "remote process exited, failed or timed out (spccl; ncclGetLastError names it)";
    case ncclInProgress:
      return "operation in progress";
#ifdef SPCCL_NCCL_HAS_TIMEOUT
    case ncclTimeout:
      return "timeout (spccl; ncclGetLastError has the details)";
#endif
    default:
      return "unknown result code";
  }
}

ncclResult_t fail(InterposedComm* comm, ncclResult_t code, const char* fmt, ...) {
  char buffer[kLastErrorBytes];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  try {
    SPCCL_WARN("NCCL interposer: %s", buffer);
  } catch (const std::exception&) {
    // The log's first use sets it up, which may allocate: the failure is
    // still the call's (an entry's guard calls this from its catch).
  }
  remember(comm, buffer);
  return code;
}

ncclResult_t finishSpccl(InterposedComm* comm, spcclResult_t result) {
  if (result == spcclSuccess) return ncclSuccess;
  if (result == spcclInProgress) return ncclInProgress;  // not a failure
  // The communicator's message, unless the failure never reached it (a
  // call that failed before it had one, such as a creation).
  const char* message = spcclGetLastError(comm != nullptr ? comm->spccl : nullptr);
  if (message[0] == '\0' || std::strcmp(message, "no error") == 0)
    message = spcclGetLastError(nullptr);
  remember(comm, message);
  if (comm != nullptr &&
      (result == spcclRemoteError || result == spcclTimeout || result == spcclSystemError))
    comm->asyncError.store(toNcclResult(result));
  return toNcclResult(result);
}

ncclResult_t failCaught(const char* call, bool outOfMemory, const char* what) {
  if (outOfMemory) return fail(nullptr, ncclSystemError, "%s: out of host memory", call);
  return fail(nullptr, ncclInternalError, "%s: %s", call, what);
}

bool threadFailedInSpccl() { return tFailedInSpccl; }
const char* threadLastError() { return tLastError; }
void noteRealFailure() { tFailedInSpccl = false; }

}  // namespace spccl::nccl

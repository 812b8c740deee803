#include "errors.h"

#include <cstdarg>
#include <cstdio>
#include <string>

#include "base/log.h"
#include "interposed_comm.h"

namespace spccl::nccl {

namespace {

thread_local std::string tLastError;
thread_local bool tFailedInSpccl = false;

void remember(InterposedComm* comm, const std::string& message) {
  tLastError = message;
  tFailedInSpccl = true;
  if (comm == nullptr) return;
  std::lock_guard<std::mutex> lock(comm->mutex);
  comm->lastError = message;
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
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  SPCCL_WARN("NCCL interposer: %s", buffer);
  remember(comm, buffer);
  return code;
}

ncclResult_t finishSpccl(InterposedComm* comm, spcclResult_t result) {
  if (result == spcclSuccess) return ncclSuccess;
  if (result == spcclInProgress) return ncclInProgress;  // not a failure
  // The communicator's message, unless the failure never reached it (a
  // call that failed before it had one, such as a creation).
  std::string message = spcclGetLastError(comm != nullptr ? comm->spccl : nullptr);
  if (message.empty() || message == "no error") message = spcclGetLastError(nullptr);
  remember(comm, message);
  if (comm != nullptr &&
      (result == spcclRemoteError || result == spcclTimeout || result == spcclSystemError))
    comm->asyncError.store(toNcclResult(result));
  return toNcclResult(result);
}

bool threadFailedInSpccl() { return tFailedInSpccl; }
const char* threadLastError() { return tLastError.c_str(); }
void noteRealFailure() { tFailedInSpccl = false; }

}  // namespace spccl::nccl

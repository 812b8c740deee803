#include "core/revoke.h"

#include <mutex>
#include <string>

#include "base/check.h"
#include "base/log.h"
#include "core/comm.h"
#include "core/fault_service.h"

namespace spccl {

namespace {
// How long a failed call waits for the fault service to read what is
// already there: a thread wake-up or two, longer on a loaded machine
// (20 ms missed it once with 8 ranks on 2 busy cores); failures only.
constexpr int64_t kCatchUpMs = 100;
}  // namespace

spcclResult_t revokeComm(spcclComm_t comm) {
  FaultService& fs = *comm->fault;
  const std::string why =
      "rank " + std::to_string(comm->rank) + " revoked the communicator (spcclCommRevoke)";
  if (!fs.markRevoked(why)) return spcclSuccess;
  SPCCL_INFO(kLogInit, "rank %d: revoking the communicator", comm->rank);
  {
    // The abort frames end the peers' pending calls now. A call of this
    // rank in progress on another thread holds the engine: it ends at its
    // deadline, or through the peers' own abort frames, as spcclRevoked.
    std::unique_lock<std::mutex> exec(comm->execMutex, std::try_to_lock);
    if (exec.owns_lock() && comm->engine) comm->engine->abort(spcclRevoked, why);
  }
  fs.relayRevoke(-1);
  return spcclSuccess;
}

spcclResult_t revokedResult(spcclComm_t comm, spcclResult_t result) {
  if (comm == nullptr || !comm->fault || result == spcclSuccess) return result;
  FaultService& fs = *comm->fault;
  // spcclRevoked itself needs no marking here: it may be another
  // communicator's (a child's creation fails through its parent's call),
  // and this one's engine, broken by the revoker's abort frame, keeps
  // failing with it while the relay marks the service.
  if (result == spcclRevoked) return result;
  // A revoke that waits unread (this rank was stopped while the others
  // revoked) is the reason, not the abort frames that came with it.
  if (!fs.revoked() && (result == spcclRemoteError || result == spcclTimeout))
    fs.catchUp(kCatchUpMs);
  if (!fs.revoked()) return result;
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): the next call overwrites it
  const std::string failure = threadLastError();
  return SPCCL_FAIL(spcclRevoked, "%s (the call had failed: %s)", fs.revokedReason().c_str(),
                    failure.c_str());
}

spcclResult_t failIfRevoked(spcclComm_t comm) {
  if (comm == nullptr || !comm->fault || !comm->fault->revoked()) return spcclSuccess;
  return SPCCL_FAIL(spcclRevoked, "rank %d: the communicator is revoked: %s", comm->rank,
                    comm->fault->revokedReason().c_str());
}

}  // namespace spccl

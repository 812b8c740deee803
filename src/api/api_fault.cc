// API: life after a failure: revoke, agreement, shrink
// (docs/fault-tolerance.md).
#include <algorithm>
#include <mutex>
#include <vector>

#include "api/api_guard.h"
#include "api/unique_id.h"
#include "base/check.h"
#include "core/agreement.h"
#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/fault_service.h"
#include "core/revoke.h"
#include "core/shrink.h"
#include "spccl.h"

using namespace spccl;

namespace {

// finishCall without the revoke's mapping (core/revoke.h): these calls
// are meant for a revoked communicator, and their own errors stand.
spcclResult_t keepError(spcclComm_t comm, spcclResult_t result) {
  if (result != spcclSuccess) comm->lastError = threadLastError();
  return result;
}

}  // namespace

extern "C" {

spcclResult_t spcclCommRevoke(spcclComm_t comm) {
  return guardCommApi("spcclCommRevoke", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommRevoke: comm is NULL");
    return finishCall(comm, revokeComm(comm));
  });
}

spcclResult_t spcclCommAgree(spcclComm_t comm, int* flag) {
  return guardCommApi("spcclCommAgree", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommAgree: comm is NULL");
    if (flag == nullptr)
      return keepError(comm, SPCCL_FAIL(spcclInvalidArgument, "spcclCommAgree: flag is NULL"));
    AgreementResult result;
    spcclResult_t res = runAgreement(*comm->fault, *flag, &result);
    if (res != spcclSuccess) return keepError(comm, res);
    *flag = result.flag;
    std::lock_guard<std::mutex> lock(comm->fault->mutex);
    comm->fault->lastAgreedFailed = result.failedRanks;
    return spcclSuccess;
  });
}

spcclResult_t spcclCommGetFailedRanks(spcclComm_t comm, int* failedRanks, int maxRanks,
                                      int* nFailed) {
  return guardCommApi("spcclCommGetFailedRanks", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "spcclCommGetFailedRanks: comm is NULL");
    if (nFailed == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "spcclCommGetFailedRanks: nFailed is NULL");
    if (maxRanks < 0 || (maxRanks > 0 && failedRanks == nullptr))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "spcclCommGetFailedRanks: failedRanks is NULL or maxRanks %d is negative",
                        maxRanks);
    std::lock_guard<std::mutex> lock(comm->fault->mutex);
    const std::vector<int>& failed = comm->fault->lastAgreedFailed;
    *nFailed = static_cast<int>(failed.size());
    std::copy_n(failed.begin(), std::min<size_t>(failed.size(), static_cast<size_t>(maxRanks)),
                failedRanks);
    return spcclSuccess;
  });
}

spcclResult_t spcclCommShrink(spcclComm_t comm, const int* excludeRanks, int nExclude,
                              const spcclConfig_t* config, spcclComm_t* newcomm) {
  return guardCommApi("spcclCommShrink", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommShrink: comm is NULL");
    if (newcomm == nullptr)
      return keepError(comm, SPCCL_FAIL(spcclInvalidArgument,
                                        "spcclCommShrink: newcomm (output pointer) is NULL"));
    *newcomm = nullptr;
    CommOptions options = comm->options;
    if (config != nullptr) SPCCL_CHECK(keepError(comm, resolveCommOptions(config, &options)));
    FaultService& fs = *comm->fault;
    ShrinkPlan plan;
    SPCCL_CHECK(keepError(comm, planShrink(fs, excludeRanks, nExclude, &plan)));
    auto shrink = [&]() -> spcclResult_t {
      spcclUniqueId wire;
      if (plan.leader == comm->rank) {
        // The id travels without its secret: every survivor derives it.
        SPCCL_CHECK(newUniqueId(&comm->secret, &wire));
        UniqueIdContents offered;
        SPCCL_CHECK(decodeUniqueId(wire, &offered));
        offered.secret = JobSecret{};
        wire = encodeUniqueId(offered);
        SPCCL_CHECK(announceShrinkId(fs, plan, wire));
      } else {
        SPCCL_CHECK(awaitShrinkId(fs, plan, &wire));
      }
      UniqueIdContents id;
      SPCCL_CHECK(decodeUniqueId(wire, &id));
      SPCCL_CHECK(deriveJobSecret(comm->secret, id.commId, &id.secret));
      return createComm(id, static_cast<int>(plan.survivors.size()), plan.newRank, options,
                        newcomm);
    };
    const spcclResult_t res = shrink();
    // spcclInProgress: a non-blocking creation on its way, no error of comm's.
    if (res == spcclInProgress) return res;
    if (res != spcclSuccess) {
      // The survivors' failed shrinks end up to 2 T + 1 s apart: their
      // next agreement waits that much longer for them (core/agreement.cc).
      std::lock_guard<std::mutex> lock(fs.mutex);
      fs.shrinkFailed = true;
    }
    return keepError(comm, res);
  });
}

}  // extern "C"

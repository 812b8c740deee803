#include "core/shrink.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstring>

#include "base/check.h"
#include "base/log.h"
#include "core/fault_service.h"

namespace spccl {

spcclResult_t planShrink(FaultService& service, const int* excludeRanks, int nExclude,
                         ShrinkPlan* plan) {
  const int n = service.nranks();
  const int me = service.keys().rank;
  if (nExclude < 0)
    return SPCCL_FAIL(spcclInvalidArgument, "spcclCommShrink: nExclude %d is negative", nExclude);
  if (nExclude > 0 && excludeRanks == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "spcclCommShrink: excludeRanks is NULL but nExclude is %d", nExclude);
  std::vector<unsigned char> excluded(n, 0);
  for (int i = 0; i < nExclude; ++i) {
    int r = excludeRanks[i];
    if (r < 0 || r >= n)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "spcclCommShrink: excludeRanks[%d] = %d is out of range [0, %d)", i, r, n);
    if (excluded[r] != 0)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "spcclCommShrink: excludeRanks[%d] = %d is listed twice", i, r);
    excluded[r] = 1;
  }
  if (excluded[me] != 0)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "spcclCommShrink: rank %d is in excludeRanks: only the ranks that stay "
                      "call spcclCommShrink",
                      me);
  plan->survivors.clear();
  // FNV-1a over the excluded bitmap: equal on ranks that passed equal sets.
  plan->digest = 1469598103934665603ull;
  for (int r = 0; r < n; ++r) {
    plan->digest = (plan->digest ^ excluded[r]) * 1099511628211ull;
    if (excluded[r] == 0) plan->survivors.push_back(r);
  }
  plan->leader = plan->survivors.front();
  plan->newRank = static_cast<int>(std::find(plan->survivors.begin(), plan->survivors.end(), me) -
                                   plan->survivors.begin());
  std::lock_guard<std::mutex> lock(service.mutex);
  plan->instance = ++service.shrinkCount;
  return spcclSuccess;
}

spcclResult_t announceShrinkId(FaultService& service, const ShrinkPlan& plan,
                               const spcclUniqueId& id) {
  for (int r : plan.survivors) {
    if (r == plan.leader) continue;
    FaultMessage message;
    message.header.kind = static_cast<uint16_t>(FaultKind::ShrinkId);
    message.header.instance = plan.instance;
    message.header.digest = plan.digest;
    message.payload.resize(sizeof(id));
    std::memcpy(message.payload.data(), &id, sizeof(id));
    // A survivor that cannot be reached fails the new communicator's
    // rendezvous on every rank, which names it; nothing more to do here.
    if (service.send(r, std::move(message), Deadline(service.timeoutMs()), nullptr) != spcclSuccess)
      SPCCL_WARN("spcclCommShrink on rank %d: could not hand the new id to surviving rank %d: %s",
                 service.keys().rank, r, threadLastError().c_str());
  }
  return spcclSuccess;
}

spcclResult_t awaitShrinkId(FaultService& service, const ShrinkPlan& plan, spcclUniqueId* id) {
  const int64_t waitMs = 2 * static_cast<int64_t>(service.timeoutMs()) + 1000;
  std::unique_lock<std::mutex> lock(service.mutex);
  if (!service.changed.wait_for(lock, std::chrono::milliseconds(waitMs),
                                [&] { return service.shrinkIds.count(plan.instance) != 0; }))
    return SPCCL_FAIL(spcclTimeout,
                      "spcclCommShrink on rank %d: the new communicator's leader, rank %d, sent "
                      "no id within %lld ms: is it alive, and calling spcclCommShrink?",
                      service.keys().rank, plan.leader, static_cast<long long>(waitMs));
  FaultMessage message = std::move(service.shrinkIds[plan.instance]);
  service.shrinkIds.erase(plan.instance);
  lock.unlock();
  if (message.header.src != plan.leader || message.payload.size() != sizeof(*id))
    return SPCCL_FAIL(spcclInvalidUsage,
                      "spcclCommShrink on rank %d: shrink #%" PRIu64
                      " got its id from rank %d, but the leader of this rank's survivors is "
                      "rank %d: the ranks passed different excludeRanks",
                      service.keys().rank, plan.instance, message.header.src, plan.leader);
  if (message.header.digest != plan.digest)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "spcclCommShrink on rank %d: rank %d (the leader) passed different "
                      "excludeRanks than this rank",
                      service.keys().rank, plan.leader);
  std::memcpy(id, message.payload.data(), sizeof(*id));
  return spcclSuccess;
}

}  // namespace spccl

#include "api/migration_call.h"

#include "base/check.h"
#include "core/comm.h"

namespace spccl::migrate {

spcclResult_t runMigrationCall(
    spcclComm_t comm, StagedCall& staged, const RootedCallNames& names,
    const CollSignature& signature,
    const std::function<std::function<spcclResult_t(CollContext&)>(const HostView&)>& makeBody,
    spcclRequest_t* request) {
  spcclResult_t res = staged.requireSameKind("sendbuff", "recvbuff");
  if (res == spcclSuccess) res = staged.prepare();
  if (res != spcclSuccess) return rejectCall(comm, res);
  auto body = makeBody([&staged](const void* pointer) { return staged.hostView(pointer); });
  auto rooted = [names, body](CollContext& ctx) -> spcclResult_t {
    SPCCL_CHECK(agreeOnRoot(ctx, names));
    return body(ctx);
  };
  return finishCall(comm, staged.runCollectiveOrQueue(signature, rooted, request));
}

}  // namespace spccl::migrate

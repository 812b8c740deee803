#include "api/migration_call.h"

#include "base/check.h"
#include "core/comm.h"

namespace spccl::migrate {

spcclResult_t runMigrationCall(spcclComm_t comm, const RootedCallNames& names,
                               const CollSignature& signature,
                               const std::function<spcclResult_t(CollContext&)>& body) {
  return runCollectiveBlocking(comm, signature, [&](CollContext& ctx) -> spcclResult_t {
    SPCCL_CHECK(agreeOnRoot(ctx, names));
    return body(ctx);
  });
}

}  // namespace spccl::migrate

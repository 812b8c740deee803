#include "migrate/migration_call.h"

#include "core/check.h"
#include "core/comm.h"

namespace spccl::migrate {

CollSignature migrationSignature(MigrationKind kind, spcclDataType_t datatype, spcclRedOp_t op,
                                 int root, size_t count) {
  const uint8_t kindCode = static_cast<uint8_t>(static_cast<uint8_t>(kind) * kKindStride);
  return CollSignature{CollType::Migration, static_cast<uint8_t>(datatype),
                       static_cast<uint8_t>(kindCode + static_cast<uint8_t>(op)), root, count};
}

spcclResult_t runMigrationCall(spcclComm_t comm, const RootedCallNames& names,
                               const CollSignature& signature,
                               const std::function<spcclResult_t(CollContext&)>& body) {
  spcclResult_t result = runBlocking(comm, [&]() -> spcclResult_t {
    Engine& engine = *comm->engine;
    uint64_t seq = 0;
    SPCCL_CHECK(engine.beginCollective(signature, &seq));
    CollContext ctx(engine, signature, seq);
    SPCCL_CHECK(agreeOnRoot(ctx, names));
    return body(ctx);
  });
  return finishCall(comm, result);
}

}  // namespace spccl::migrate

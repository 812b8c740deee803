#include "migrate/migration_signature.h"

namespace spccl::migrate {

CollSignature migrationSignature(MigrationKind kind, spcclDataType_t datatype, spcclRedOp_t op,
                                 int root, size_t count) {
  const uint8_t kindCode = static_cast<uint8_t>(static_cast<uint8_t>(kind) * kKindStride);
  return CollSignature{CollType::Migration, static_cast<uint8_t>(datatype),
                       static_cast<uint8_t>(kindCode + static_cast<uint8_t>(op)), root, count};
}

}  // namespace spccl::migrate

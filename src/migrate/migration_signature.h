// A load-balancing call's signature, so that ranks that called different
// migration calls, counts, types or ops get the engine's mismatch error
// (the API runs it: api/migration_call.h).
#pragma once

#include <cstddef>

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

// Which load-balancing call a Migration signature stands for. The frame
// header has no field of its own for it, so it shares the op byte with the
// reduction op: op = kind * kKindStride + op.
enum class MigrationKind : uint8_t {
  Broadcast = 1,
  Reduce = 2,
  MergedAllReduce = 3,
  Scatter = 4,
  Gather = 5,
  PlanExchange = 6,
};
constexpr uint8_t kKindStride = kMigrationKindStride;  // runtime/frame.h

CollSignature migrationSignature(MigrationKind kind, spcclDataType_t datatype, spcclRedOp_t op,
                                 int root, size_t count);

}  // namespace spccl::migrate

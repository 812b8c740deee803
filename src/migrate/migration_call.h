// How a load-balancing call meets the engine: its signature (so ranks that
// called different migration calls, counts, types or ops get the engine's
// mismatch error), the root agreement of the rooted ones (so ranks that
// passed different stragglers, dests or roots fail together instead of
// hanging) and the blocking run on a CollContext.
#pragma once

#include <cstddef>
#include <functional>

#include "coll/root_agreement.h"
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

// Runs body on a fresh CollContext for `signature`, in issue order with the
// communicator's non-blocking work, and records a failure as comm's last
// error. A rooted signature (root >= 0) first runs agreeOnRoot with
// `names`; unrooted calls pass names.argument = nullptr.
spcclResult_t runMigrationCall(spcclComm_t comm, const RootedCallNames& names,
                               const CollSignature& signature,
                               const std::function<spcclResult_t(CollContext&)>& body);

}  // namespace spccl::migrate

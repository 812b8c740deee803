// How a load-balancing call meets the engine: its signature (so ranks that
// called different migration calls, counts, types or ops get the engine's
// mismatch error), the root agreement of the rooted ones (so ranks that
// passed different stragglers, dests or roots fail together instead of
// hanging) and the blocking run on a CollContext.
#pragma once

#include <functional>

#include "coll/root_agreement.h"
#include "migrate/migration_signature.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

// Runs body on a fresh CollContext for `signature`, in issue order with the
// communicator's non-blocking work, and records a failure as comm's last
// error. A rooted signature (root >= 0) first runs agreeOnRoot with
// `names`; unrooted calls pass names.argument = nullptr.
spcclResult_t runMigrationCall(spcclComm_t comm, const RootedCallNames& names,
                               const CollSignature& signature,
                               const std::function<spcclResult_t(CollContext&)>& body);

}  // namespace spccl::migrate

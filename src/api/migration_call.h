// How a load-balancing call meets the engine: its signature (so ranks that
// called different migration calls, counts, types or ops get the engine's
// mismatch error), the root agreement of the rooted ones (so ranks that
// passed different stragglers, dests or roots fail together instead of
// hanging) and the blocking run on a CollContext.
#pragma once

#include <functional>

#include "coll/root_agreement.h"
#include "core/staged_call.h"
#include "migrate/migration_signature.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

// Stages the call's buffers (core/staged_call.h: buffers as add()ed to
// `staged`, which must not be prepared yet; a failure there rejects the
// call), then runs body on a fresh CollContext for `signature`, in issue
// order with the communicator's other work, at once or on the stream, and
// records a failure as comm's last error. body receives the staged
// StagedCall's hostView to find its buffers. With a request (the
// non-blocking forms, spcclImigrate*), the call is queued on the
// communicator's worker and completes through spcclTest/spcclWait. A rooted signature (root >= 0)
// first runs agreeOnRoot with `names`; unrooted calls pass
// names.argument = nullptr.
using HostView = std::function<void*(const void*)>;
spcclResult_t runMigrationCall(
    spcclComm_t comm, StagedCall& staged, const RootedCallNames& names,
    const CollSignature& signature,
    const std::function<std::function<spcclResult_t(CollContext&)>(const HostView&)>& makeBody,
    spcclRequest_t* request = nullptr);

}  // namespace spccl::migrate

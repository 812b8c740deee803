// Rooted calls (broadcast, reduce, scatter, gather and the migration calls
// built on them) agree on their root before any data moves. Ranks that
// pass different roots build different trees: some of them then wait on
// peers that never send to them, no frame is ever checked, and the call
// hangs until the deadline instead of failing with the engine's mismatch
// error. This step turns that into spcclInvalidUsage on every rank.
#pragma once

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// How a rooted call names itself and its root argument in errors.
struct RootedCallNames {
  const char* call;      // "spcclMigrateBroadcast"
  const char* argument;  // "straggler", "dest" or "root"
};

// Checks that every rank passed the root of call.signature(). A no-op on
// one rank, for unrooted signatures (root < 0) and with
// SPCCL_CHECK_ROOTS=0; every rank makes the same choice (communicator
// creation checks it: core/job_settings.h).
spcclResult_t agreeOnRoot(CollContext& call, const RootedCallNames& names);

}  // namespace spccl

// The one small all-gather: every rank's few bytes to every rank, O(n)
// messages. Used for agreements (a call's header, statistics, link
// profiles, split colours), never for user data.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

class Engine;

// all[r * bytes ...] gets rank r's `mine`, through the collective's own
// context (so its signature guards the exchange); all holds nranks * bytes.
spcclResult_t allGatherSmall(CollContext& ctx, const void* mine, size_t bytes, void* all);

// The same as a collective call of its own (CollType::Internal), for the
// library's own exchanges outside any user call.
spcclResult_t internalAllGather(Engine& engine, const void* mine, size_t bytes, void* all);

// Peers in the order a rank talks to them: rank+1, rank+2, ... so that not
// every rank sends to rank 0 first.
std::vector<int> peersInTurn(int rank, int nranks);

}  // namespace spccl

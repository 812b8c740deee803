// Communicators: created from a unique id (one rank, or a whole clique in
// this process), split, shrunk, destroyed. Each is a spccl communicator
// and, in forward mode, a real NCCL one made beside it (the real unique
// id travels over the new spccl communicator: unique_id.h). Creations
// inside a group run at its end (group.h).
#pragma once

#include <nccl.h>

#include <memory>

#include "interposed_comm.h"

namespace spccl::nccl {

ncclResult_t initRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config, const char* call);
ncclResult_t initAll(ncclComm_t* comms, int ndev, const int* devlist);
// parent: the caller's lease (a creation deferred to the group's end takes
// a lease of its own there).
ncclResult_t split(const CommLease& parent, int color, int key, ncclComm_t* out,
                   ncclConfig_t* config);
// spcclCommShrink: works on a revoked or broken parent, needs nothing from
// the excluded ranks (dead or alive).
ncclResult_t shrink(const CommLease& parent, const int* excludeRanks, int excludeCount,
                    ncclComm_t* out, ncclConfig_t* config, int flags);
// ncclCommRevoke: spcclCommRevoke (every rank's calls on comm fail from
// now on), and in forward mode the real NCCL's revoke.
ncclResult_t revoke(InterposedComm* comm, int flags);
// comm: unregistered already (unregisterComm), so no call starts on it.
// abort: ncclCommAbort: calls of other threads blocked on comm are
// stopped first (peers are told; no goodbye); destroy waits for them.
// Either way the spccl communicator is freed only once no call is left
// inside, within SPCCL_TIMEOUT_MS (past it, it stays allocated, with a
// WARN). Prints the report (SPCCL_INTERPOSE_REPORT) first.
ncclResult_t destroy(const std::shared_ptr<InterposedComm>& comm, bool abort);

}  // namespace spccl::nccl

// Communicators: created from a unique id (one rank, or a whole clique in
// this process), split, shrunk, destroyed. Each is a spccl communicator
// and, in forward mode, a real NCCL one made beside it (the real unique
// id travels over the new spccl communicator: unique_id.h). Creations
// inside a group run at its end (group.h).
#pragma once

#include <nccl.h>

#include "interposed_comm.h"

namespace spccl::nccl {

ncclResult_t initRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config, const char* call);
ncclResult_t initAll(ncclComm_t* comms, int ndev, const int* devlist);
ncclResult_t split(InterposedComm* parent, int color, int key, ncclComm_t* out,
                   ncclConfig_t* config);
ncclResult_t shrink(InterposedComm* parent, const int* excludeRanks, int excludeCount,
                    ncclComm_t* out, ncclConfig_t* config, int flags);
// abort: ncclCommAbort (peers are told; no goodbye). Prints the report
// (SPCCL_INTERPOSE_REPORT) first.
ncclResult_t destroy(InterposedComm* comm, bool abort);

}  // namespace spccl::nccl

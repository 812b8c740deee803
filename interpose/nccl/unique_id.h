// What an ncclUniqueId of this library carries: a tag and spccl's unique id
// (src/core/bootstrap.h: magic, version, the rendezvous root's address, the
// job secret and the communicator id, 56 bytes of spcclUniqueId's 128).
//
// Not the real NCCL's id, in forward mode either: its 128 bytes and
// spccl's do not both fit in one ncclUniqueId, and NCCL's layout is its
// own. The real id is made when the communicator is created instead: its
// rank 0 calls the real ncclGetUniqueId and broadcasts the id over the new
// spccl communicator (comm_lifecycle.cc). So the process that called
// ncclGetUniqueId hosts spccl's rendezvous, and rank 0 NCCL's.
#pragma once

#include <nccl.h>

#include "spccl.h"

namespace spccl::nccl {

ncclUniqueId packUniqueId(const spcclUniqueId& id);
// false: id was not made by this library's ncclGetUniqueId.
bool unpackUniqueId(const ncclUniqueId& id, spcclUniqueId* out);

}  // namespace spccl::nccl

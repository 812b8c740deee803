// Which buffers a valid collective call reaches, for staging and for the
// device-resident path alike (core/staged_call.h): the bytes each spans
// and whether the call reads or writes them. One table, so that a grouped
// call (core/device_group.h) is checked exactly as the same call made
// outside a group.
#pragma once

#include "coll/collective.h"
#include "core/staged_call.h"
#include "spccl.h"

namespace spccl {

// The call's buffers, added to staged. A broadcast's non-root adds no
// sendbuff and a reduce's non-root no recvbuff: they pass none (NCCL's
// rule), so nothing is checked or copied for them.
void addCollectiveBuffers(StagedCall& staged, const CollArgs& args, int rank, int nranks);

// addCollectiveBuffers, then sendbuff and recvbuff of one kind (both
// device memory of one device, or both memory the CPU reaches) where the
// call passes both; the failure names the call and the buffers.
spcclResult_t addCollectiveBuffersOfOneKind(StagedCall& staged, const CollArgs& args, int rank,
                                            int nranks);

}  // namespace spccl

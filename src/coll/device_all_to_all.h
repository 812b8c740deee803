// The all-to-all and all-to-allv of device buffers, device-resident (docs/gpu.md,
// "Device-resident collectives"), the MoE pattern: after the agreement
// (coll/device_exchange.h), which exports every rank's sendbuff, each rank
// copies block `me` of every rank's sendbuff into that rank's block of its
// own recvbuff (cuMemcpyAsync, device to device, on the communicator's
// stream; no kernel). The closing barrier carries every rank's status;
// after it the peers' sendbuffs are free again.
//
// The all-to-allv the same way, block by block: each rank knows only its
// own counts and displacements, so the schedule first gathers every
// rank's send blocks (count and displacement per peer, one small
// all-gather): rank me reads its block at p's sdispls[me] in p's sendbuff,
// and checks p's sendcounts[me] against its own recvcounts[p]. A mismatch
// fails the call on every rank (the barrier): spcclInvalidUsage naming
// both ranks on the rank that found it, spcclRemoteError naming that rank
// on the others; nothing is copied on that rank. The gaps between blocks
// of recvbuff keep what they held.
//
// In place (recvbuff overlapping sendbuff) a peer would read block q of
// this rank's sendbuff while this rank writes block q of its recvbuff, the
// same bytes. So such a rank first copies its send data to a scratch of
// the communicator's (device/peer_readable_scratch.h) and exports that
// instead (coll/device_exchange.cc, copyToScratch): the schedule is the
// same, reading the scratch where it read sendbuff, this rank's own block
// included.
#pragma once

#include "coll/device_exchange.h"

namespace spccl {

const DeviceSchedule& deviceAllToAllSchedule();
const DeviceSchedule& deviceAllToAllvSchedule();

}  // namespace spccl

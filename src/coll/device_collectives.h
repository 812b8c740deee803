// The dense collectives of device buffers that run device-resident, NCCL's
// way, when every rank is on one host (docs/gpu.md, "Device-resident
// collectives"): the all-reduce (coll/device_all_reduce.h) and, after the
// same agreement (coll/device_exchange.h), which exports the send buffers:
// - reduce-scatter: rank r reduces block r of all n send buffers, in rank
//   order, into its receive buffer (the all-reduce's first step);
// - all-gather: each rank copies every peer's send buffer into that
//   peer's slot of its receive buffer (in place, its own slot stays);
// - broadcast: every rank copies the root's send buffer into its receive
//   buffer (the root only where not in place);
// - reduce: the root reduces all n send buffers, in rank order, into its
//   receive buffer. One launch chain on one rank, rather than each rank
//   reducing its block into the root's buffer: the root's receive buffer
//   is then never exported nor written over IPC (a non-root passes none),
//   and the bits are the same either way; the cost is the root reading
//   all n inputs alone;
// - all-to-all and all-to-allv: coll/device_all_to_all.h (not in place).
// Each ends with a barrier, after which the peers' buffers are free again.
#pragma once

#include "coll/device_call.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// The collectives above (the others of device buffers are staged).
bool runsDeviceResident(CollType type);

// The call on ctx (a rooted call agrees on its root first,
// coll/root_agreement.h). The calling thread has the buffers' CUDA context
// current where call.device. *onDevices: whether the ranks took the
// device path (false: the fallback ran).
spcclResult_t runDeviceCollective(CollContext& ctx, const DeviceCall& call,
                                  device::PeerAllocations& peers, bool* onDevices);

}  // namespace spccl

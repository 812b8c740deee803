// Scatter and gather of device buffers (the linear scatter and gather of
// migrate/migration_schedules.h, SEMI-migration section IV-A's baseline)
// on a communicator whose calls join the device path (docs/gpu.md,
// "Migration calls of device buffers"). After the root agreement and the
// device path's agreement (coll/device_exchange.h), which exports the send
// buffers:
// - scatter: every rank copies its block of the root's sendbuff into its
//   recvbuff over IPC (the root its own, unless in place);
// - gather: the root copies every rank's sendbuff into that rank's block
//   of its recvbuff (its own unless in place); the others only wait at the
//   barrier.
// The root's link, which the linear schedules spend, is no concern on one
// host. Where some rank cannot take the path, every rank runs the linear
// scatter or gather on the CPU, as the staged call does.
#pragma once

#include "coll/device_call.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

// call: type Migration, count the block's elements, root, the API's
// buffers (a non-root's unread one may be anything); rootSends: scatter.
spcclResult_t deviceScatterGather(CollContext& ctx, DeviceCall call, bool rootSends,
                                  device::PeerAllocations& peers, bool* onDevices);

}  // namespace spccl::migrate

// The all-to-all of device buffers, device-resident (docs/gpu.md,
// "Device-resident collectives"), the MoE pattern: after the agreement
// (coll/device_exchange.h), which exports every rank's sendbuff, each rank
// copies block `me` of every rank's sendbuff into that rank's block of its
// own recvbuff (cuMemcpyAsync, device to device, on the communicator's
// stream; no kernel). The closing barrier carries every rank's status;
// after it the peers' sendbuffs are free again.
//
// In place (recvbuff overlapping sendbuff) does not take this path: a peer
// reads block q of this rank's sendbuff while this rank writes block q of
// its recvbuff, the same bytes. Such a call falls back (every rank alike)
// to the CPU all-to-all, which exchanges from a copy.
#pragma once

#include "coll/device_exchange.h"

namespace spccl {

const DeviceSchedule& deviceAllToAllSchedule();

}  // namespace spccl

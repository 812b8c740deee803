// The device-resident all-reduce (docs/gpu.md, "Device-resident
// collectives"): for device buffers when every rank is on one host,
// NCCL's way, with no copy through host memory. After the agreement of
// coll/device_exchange.h (the IPC handles of the send and receive
// buffers):
// 1. each rank reduces its 1/n block from all n send buffers, in rank
//    order (so every rank gets the same bits), into its receive buffer,
//    with a kernel of spccl's fatbin (coll/device_reduce_launch.h);
// 2. a barrier; each rank copies the other blocks from the peers' receive
//    buffers; a barrier (the peers' buffers are free again).
// The kernels and copies run on the communicator's own stream and are
// synchronised before the call ends. Where some rank cannot take it,
// every rank falls back to the CPU all-reduce (device_exchange.h).
#pragma once

#include "coll/device_call.h"
#include "coll/device_reduce_launch.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// The all-reduce's name for the call, from before the other collectives
// took the path too (core/device_collective_call.cc fills one).
using DeviceAllReduceCall = DeviceCall;

// The call on ctx, by the schedule above. The calling thread has the
// buffers' CUDA context current where call.device. *onDevices: whether the
// ranks took the device path (false: the fallback ran).
spcclResult_t runDeviceAllReduce(CollContext& ctx, const DeviceAllReduceCall& call,
                                 device::PeerAllocations& peers, bool* onDevices);

}  // namespace spccl

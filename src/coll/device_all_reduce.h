// The device-resident all-reduce (docs/gpu.md, "Device-resident
// all-reduce"): for device buffers when every rank is on one host, NCCL's
// way, with no copy through host memory:
// 1. the ranks exchange CUDA IPC handles of their send and receive buffers
//    and agree that every rank can take this path;
// 2. each rank reduces its 1/n block from all n send buffers, in rank
//    order (so every rank gets the same bits), into its receive buffer,
//    with a kernel of spccl's fatbin (kernels/device_reduce);
// 3. a barrier; each rank copies the other blocks from the peers' receive
//    buffers; a barrier (the peers' buffers are free again).
// The kernels and copies run on the communicator's own stream and are
// synchronised before the call ends.
//
// Where a rank cannot take it (host buffers, no IPC, a buffer it cannot
// export, buffers on another device than the communicator's at creation,
// ranks of one process on different devices), every rank falls back in
// the same call: a rank with device buffers copies them through host
// memory and the CPU all-reduce runs.
#pragma once

#include <cstddef>

#include "device/peer_access.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

struct DeviceAllReduceCall {
  const char* name = "spcclAllReduce";
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;
  spcclDataType_t datatype = spcclFloat32;
  spcclRedOp_t op = spcclSum;
  bool device = false;  // this rank's buffers are device memory (of the current context)
  // The device the communicator was created on, whose peer access every
  // rank checked (core/device_all_reduce_call.h): buffers on another
  // device make the call fall back.
  device::DeviceLocation creationDevice = 0;
};

// Whether this libspccl carries the kernels and the loaded driver can load
// them and open IPC handles: a rank without it joins but cannot take the
// path (the call falls back on every rank).
bool deviceAllReduceAvailable();

// Loads the kernel for (datatype, op) in the calling thread's context, on
// the caller's thread, before the call is enqueued: cuModuleLoadData may
// wait for the device, and on the worker it would wait for the caller's
// stream, which the call holds. A failure here only makes the call fall
// back (runDeviceAllReduce looks again).
spcclResult_t prepareDeviceAllReduce(spcclDataType_t datatype, spcclRedOp_t op);

// The call on ctx, by the schedule above. The calling thread has the
// buffers' CUDA context current where call.device. *onDevices: whether the
// ranks took the device path (false: the fallback ran).
spcclResult_t runDeviceAllReduce(CollContext& ctx, const DeviceAllReduceCall& call,
                                 device::PeerAllocations& peers, bool* onDevices);

}  // namespace spccl

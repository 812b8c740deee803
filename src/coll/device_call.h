// One dense collective on device buffers as the device-resident schedules
// take it (coll/device_collectives.h): the API call's arguments, whether
// this rank's buffers are device memory, and the device the communicator
// was created on.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/collective.h"
#include "device/peer_access.h"
#include "runtime/coll_context.h"
#include "runtime/frame.h"
#include "spccl.h"

namespace spccl {

struct DeviceCall {
  const char* name = "spcclAllReduce";
  CollType type = CollType::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  // The API's count: per rank for reduce-scatter (recvcount) and
  // all-gather (sendcount), as in CollArgs.
  size_t count = 0;
  spcclDataType_t datatype = spcclFloat32;
  spcclRedOp_t op = spcclSum;
  int root = -1;  // broadcast and reduce
  // How the call names its root in a mismatch error (coll/root_agreement.h):
  // "straggler" and "dest" for the migration calls built on these.
  const char* rootArgument = "root";
  // The CPU collective a fallback runs, on host pointers; nullptr: the
  // dense collective the communicator chooses (ctx.denseAlgorithm()). The
  // migration calls keep the staged calls' schedules (the pipelined chain,
  // the linear scatter and gather), so a fallback gives the staged bits.
  spcclResult_t (*hostRun)(CollContext& ctx, const CollArgs& args) = nullptr;
  // Type Migration (scatter and gather, whose extents the type does not
  // say): this rank's bytes of sendbuff and recvbuff, 0 where it passes none.
  size_t sendBytes = 0, recvBytes = 0;
  bool device = false;  // this rank's buffers are device memory (of the current context)
  // The device the communicator was created on, whose peer access every
  // rank checked (core/device_collective_call.h): buffers on another
  // device make the call fall back.
  device::DeviceLocation creationDevice = 0;
  // All-to-allv only: the API's arrays, copied (a call on a stream or
  // queued runs after the API returns), nranks entries each, in elements.
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;
};

}  // namespace spccl

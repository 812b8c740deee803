// Every collective and point-to-point entry point comes here: the
// communicator is looked up, the call routed (routing.h) and then
// forwarded to the real NCCL unchanged, refused, or run by spccl (now, or
// at the group's end: group.h).
#pragma once

#include <nccl.h>

#include <cstddef>

namespace spccl::nccl {

enum class Collective {
  AllReduce,
  Broadcast,
  Bcast,  // ncclBcast: Broadcast in place
  Reduce,
  AllGather,
  ReduceScatter,
  AlltoAll,
  Gather,
  Scatter,
  Send,
  Recv,
};

struct CollCall {
  Collective kind = Collective::AllReduce;
  const char* name = "";  // the NCCL function, for messages and the report
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // as the NCCL function's count argument
  ncclDataType_t datatype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = -1;  // root, or the peer of Send and Recv
  cudaStream_t stream = nullptr;
};

ncclResult_t issue(ncclComm_t comm, const CollCall& call);

// The same call on the real NCCL, arguments unchanged (comm is the real
// NCCL's). For calls reaching an entry point from inside the real NCCL.
ncclResult_t forwardToReal(ncclComm_t comm, const CollCall& call);

}  // namespace spccl::nccl

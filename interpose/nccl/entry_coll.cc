// Entry points of collectives, point to point and groups: coll_dispatch.h
// routes every call; group.h defers what spccl runs inside a group.
#include <nccl.h>

#include "coll_dispatch.h"
#include "entry_guard.h"
#include "errors.h"
#include "group.h"
#include "profiling_alias.h"
#include "real_nccl.h"
#include "settings.h"

using namespace spccl::nccl;

namespace {

// Inside the real NCCL every call goes straight back to it, arguments
// unchanged (its communicators are its own).
ncclResult_t route(ncclComm_t comm, const CollCall& call) {
  if (insideRealNccl()) return forwardToReal(comm, call);
  return issue(comm, call);
}

CollCall makeCall(Collective kind, const char* name, const void* sendbuff, void* recvbuff,
                  size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
                  cudaStream_t stream) {
  CollCall call;
  call.kind = kind;
  call.name = name;
  call.sendbuff = sendbuff;
  call.recvbuff = recvbuff;
  call.count = count;
  call.datatype = datatype;
  call.op = op;
  call.root = root;
  call.stream = stream;
  return call;
}

}  // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::AllReduce, "ncclAllReduce", sendbuff, recvbuff, count,
                                datatype, op, -1, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclAllReduce)

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Broadcast, "ncclBroadcast", sendbuff, recvbuff, count,
                                datatype, ncclSum, root, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclBroadcast)

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Bcast, "ncclBcast", buff, buff, count, datatype,
                                ncclSum, root, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclBcast)

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Reduce, "ncclReduce", sendbuff, recvbuff, count,
                                datatype, op, root, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclReduce)

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::AllGather, "ncclAllGather", sendbuff, recvbuff,
                                sendcount, datatype, ncclSum, -1, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclAllGather)

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::ReduceScatter, "ncclReduceScatter", sendbuff, recvbuff,
                                recvcount, datatype, op, -1, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclReduceScatter)

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::AlltoAll, "ncclAlltoAll", sendbuff, recvbuff, count,
                                datatype, ncclSum, -1, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclAlltoAll)

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Gather, "ncclGather", sendbuff, recvbuff, count,
                                datatype, ncclSum, root, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGather)

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Scatter, "ncclScatter", sendbuff, recvbuff, count,
                                datatype, ncclSum, root, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclScatter)

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Send, "ncclSend", sendbuff, nullptr, count, datatype,
                                ncclSum, peer, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclSend)

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    return route(comm, makeCall(Collective::Recv, "ncclRecv", nullptr, recvbuff, count, datatype,
                                ncclSum, peer, stream));
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclRecv)

ncclResult_t ncclGroupStart() {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    const bool forward = insideRealNccl() || settings().mode == Mode::Forward;
    if (!insideRealNccl()) groupStart();
    if (!forward) return ncclSuccess;
    const ncclResult_t r = SPCCL_FORWARD(realNccl(), GroupStart);
    if (r != ncclSuccess) noteRealFailure();
    return r;
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGroupStart)

ncclResult_t ncclGroupEnd() {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    if (insideRealNccl()) return SPCCL_FORWARD(realNccl(), GroupEnd);
    return groupEnd(nullptr);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGroupEnd)

// Replace mode: the group's calls do not run, and spccl makes no estimate
// (simInfo->estimatedTime stays as the caller set it).
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    if (insideRealNccl()) return SPCCL_FORWARD(realNccl(), GroupSimulateEnd, simInfo);
    constexpr unsigned kSimInfoMagic = 0x74685283;  // NCCL_SIM_INFO_INITIALIZER's
    if (simInfo == nullptr || simInfo->magic != kSimInfoMagic)
      return fail(nullptr, ncclInvalidArgument,
                  "ncclGroupSimulateEnd: simInfo is NULL or not initialised with "
                  "NCCL_SIM_INFO_INITIALIZER");
    return groupEnd(simInfo);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGroupSimulateEnd)

}  // extern "C"

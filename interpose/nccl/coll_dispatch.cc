#include "coll_dispatch.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "core/comm.h"
#include "density_probe.h"
#include "errors.h"
#include "group.h"
#include "interposed_comm.h"
#include "memory_kind.h"
#include "premul_sum.h"
#include "real_nccl.h"
#include "routing.h"
#include "settings.h"

namespace spccl::nccl {

namespace {

bool isPointToPoint(Collective kind) {
  return kind == Collective::Send || kind == Collective::Recv;
}

bool isReduction(Collective kind) {
  return kind == Collective::AllReduce || kind == Collective::Reduce ||
         kind == Collective::ReduceScatter;
}

// Calls spccl runs inside its own groups (src/api/api_coll.cc); sparse,
// compressed, gather and scatter calls run at once even inside one.
bool spcclGroupable(Collective kind, Target target) {
  return target == Target::SpcclDense && kind != Collective::Gather && kind != Collective::Scatter;
}

// A call this rank will not run. A collective is withdrawn through spccl,
// which tells the peers, so that their side fails at once instead of
// waiting for this rank until the deadline.
ncclResult_t refuse(InterposedComm* comm, const CollCall& call, const std::string& message) {
  if (isPointToPoint(call.kind))
    return fail(comm, ncclInvalidArgument, "%s: %s", call.name, message.c_str());
  const spcclResult_t failure =
      SPCCL_FAIL(spcclInvalidArgument, "%s (NCCL interposer): %s", call.name, message.c_str());
  return finishSpccl(comm, rejectCall(comm->spccl, failure, deferredCollectives(comm)));
}

std::string typeText(int datatype) {
  if (datatype == ncclFloat8e4m3) return "ncclFloat8e4m3";
  if (datatype == ncclFloat8e5m2) return "ncclFloat8e5m2";
  return "datatype " + std::to_string(datatype);
}

// Replace mode: what spccl cannot run, refused before anything is queued,
// as NCCL checks its arguments when a call is issued. On success *premul
// is set when op is one of comm's PreMulSum ops.
ncclResult_t checkArguments(InterposedComm* comm, const CollCall& call, bool* premul,
                            PreMulSumOp* op) {
  *premul = false;
  if (elementSize(call.datatype) == 0)
    return refuse(comm, call,
                  typeText(call.datatype) +
                      " has no spccl twin (spccl reduces int8 ... uint64, f16, f32, f64, bf16); "
                      "SPCCL_NCCL_MODE=forward sends it to the real NCCL");
  if (!isReduction(call.kind) || static_cast<int>(call.op) < ncclNumOps) {
    if (isReduction(call.kind) && static_cast<int>(call.op) < 0)
      return refuse(comm, call, "op " + std::to_string(call.op) + " is not an ncclRedOp_t");
    return ncclSuccess;
  }
  if (!comm->preMulSumOps.find(call.op, op))
    return refuse(comm, call,
                  "op " + std::to_string(call.op) +
                      " is neither a built-in ncclRedOp_t nor an op that ncclRedOpCreatePreMulSum "
                      "made on this communicator");
  if (op->datatype != call.datatype)
    return refuse(comm, call,
                  "op " + std::to_string(call.op) + " was made for datatype " +
                      std::to_string(op->datatype) + ", not " + std::to_string(call.datatype));
  *premul = true;
  return ncclSuccess;
}

// stream: NULL (host buffers, or a PreMulSum staged through host memory:
// the call completes before it returns) or the caller's (device buffers:
// spccl enqueues the call in its order).
spcclResult_t runSpccl(const CollCall& c, Target target, spcclComm_t s, const void* send,
                       ncclRedOp_t op, const CompressSetting& compress, void* stream) {
  const auto type = static_cast<spcclDataType_t>(c.datatype);
  const auto sop = static_cast<spcclRedOp_t>(op);
  if (target == Target::SpcclSparse)
    return spcclSparseAllReduce(send, c.recvbuff, c.count, type, sop, s, stream);
  if (target == Target::SpcclCompressed) {
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.codec = compress.codec;
    cfg.bits = compress.bits;
    cfg.blockSize = compress.blockSize;
    cfg.schedule = compress.schedule;
    return spcclCompressedAllReduce(send, c.recvbuff, c.count, type, sop, &cfg, s, stream);
  }
  switch (c.kind) {
    case Collective::AllReduce:
      return spcclAllReduce(send, c.recvbuff, c.count, type, sop, s, stream);
    case Collective::Broadcast:
      return spcclBroadcast(send, c.recvbuff, c.count, type, c.root, s, stream);
    case Collective::Bcast:
      return spcclBroadcast(c.recvbuff, c.recvbuff, c.count, type, c.root, s, stream);
    case Collective::Reduce:
      return spcclReduce(send, c.recvbuff, c.count, type, sop, c.root, s, stream);
    case Collective::AllGather:
      return spcclAllGather(send, c.recvbuff, c.count, type, s, stream);
    case Collective::ReduceScatter:
      return spcclReduceScatter(send, c.recvbuff, c.count, type, sop, s, stream);
    case Collective::AlltoAll:
      return spcclAllToAll(send, c.recvbuff, c.count, type, s, stream);
    case Collective::Gather:
      return spcclGather(send, c.recvbuff, c.count, type, c.root, s, stream);
    case Collective::Scatter:
      return spcclScatter(send, c.recvbuff, c.count, type, c.root, s, stream);
    case Collective::Send:
      return spcclSend(send, c.count, type, c.root, s, stream);
    case Collective::Recv:
      return spcclRecv(c.recvbuff, c.count, type, c.root, s, stream);
  }
  return spcclInternalError;
}

// What runs the call on spccl, now or at the group's end. The scratch
// buffer of a PreMulSum lives in the task, which the group keeps until
// its spccl group has ended.
//
// Host buffers: the work queued on the caller's stream is waited for, then
// spccl runs the call at once (NULL stream). Device buffers:
// the caller's stream goes to spccl, which enqueues the call in its order
// and returns; nothing here waits for the GPU. A PreMulSum on device
// buffers is the exception: the input is copied to host memory on the
// stream, scaled there, and summed by a call on host memory that
// completes before it returns; the sum is copied back to the device on
// the stream (spccl's buffers of one call are of one kind).
struct SpcclTask {
  InterposedComm* comm;
  CollCall call;
  Route route;
  bool premul;
  bool device;  // a buffer is device memory (replace mode with spccl's GPU support)
  PreMulSumOp op;
  std::shared_ptr<std::vector<unsigned char>> scratch;

  // Copies the device input (and a device-resident scalar) to host memory
  // and waits for it. Returns false with *error when the driver refuses.
  bool stageOnHost(size_t bytes, PreMulSumOp* scaled, std::string* error) const {
    scratch->resize(bytes);
    if (!copyOnStream(scratch->data(), call.sendbuff, bytes, call.stream, error)) return false;
    if (scaled->pointer != nullptr && memoryKindOf(scaled->pointer) == MemoryKind::Device) {
      if (!copyOnStream(scaled->value, scaled->pointer, elementSize(call.datatype), call.stream,
                        error))
        return false;
      scaled->pointer = nullptr;  // the value just read serves
    }
    return finishStreamWork(call.stream, error);
  }

  ncclResult_t operator()() const {
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    void* stream = nullptr;
    if (device && !premul)
      stream = static_cast<void*>(call.stream);
    else if (!device && !finishStreamWork(call.stream, &error))
      return refuse(comm, call, error);
    const void* send = call.kind == Collective::Bcast ? call.recvbuff : call.sendbuff;
    ncclRedOp_t reduceOp = call.op;
    if (premul) {
      // ReduceScatter's input holds nranks blocks of count elements.
      const size_t elements =
          call.kind == Collective::ReduceScatter ? call.count * comm->nranks : call.count;
      const size_t bytes = elements * elementSize(call.datatype);
      PreMulSumOp scaled = op;
      if (device) {
        if (!stageOnHost(bytes, &scaled, &error)) return refuse(comm, call, error);
        if (elements > 0) preMultiply(scaled, scratch->data(), elements, scratch->data());
      } else {
        scratch->resize(bytes);
        if (elements > 0) preMultiply(scaled, call.sendbuff, elements, scratch->data());
      }
      send = scratch->data();
      reduceOp = ncclSum;
    }
    const Settings& s = settings();
    CollCall run = call;
    std::vector<unsigned char> hostOutput;  // a device PreMulSum's sum, on its way back
    const size_t outputBytes = call.count * elementSize(call.datatype);
    const bool hasOutput = call.kind != Collective::Reduce || call.root == comm->rank;
    if (premul && device && hasOutput) {
      hostOutput.resize(outputBytes);
      run.recvbuff = hostOutput.data();
    }
    const spcclResult_t result =
        runSpccl(run, route.target, comm->spccl, send, reduceOp, s.compress, stream);
    if (result != spcclSuccess) return finishSpccl(comm, result);
    if (!hostOutput.empty() &&
        (!copyOnStream(call.recvbuff, hostOutput.data(), outputBytes, call.stream, &error) ||
         !finishStreamWork(call.stream, &error)))
      return refuse(comm, call, error);
    std::string path = pathName(route, s.compress);
    if (route.target == Target::SpcclSparse && stream != nullptr) {
      // Enqueued: what the planner chose is known once the stream has run
      // the call, not now (spccl's stats say it later).
      path += " (stream-ordered)";
    } else if (route.target == Target::SpcclSparse) {
      spcclSparseStats_t stats{};
      stats.size = sizeof(stats);
      // Tag 0: the call just made (keyed by count); stats.algorithm is what ran.
      if (spcclSparseGetStats(comm->spccl, 0, &stats) == spcclSuccess)
        path = sparsePathName(stats.algorithm);
    }
    comm->report.record(
        call.name, path, call.count * elementSize(call.datatype),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return ncclSuccess;
  }
};

}  // namespace

ncclResult_t forwardToReal(ncclComm_t comm, const CollCall& c) {
  const RealNccl* real = realNccl();
  if (real == nullptr)
    return fail(nullptr, ncclInvalidArgument, "%s: comm %p is not a communicator of spccl", c.name,
                static_cast<void*>(comm));
  ncclResult_t r = ncclInternalError;
  switch (c.kind) {
    case Collective::AllReduce:
      r = SPCCL_FORWARD(real, AllReduce, c.sendbuff, c.recvbuff, c.count, c.datatype, c.op, comm,
                        c.stream);
      break;
    case Collective::Broadcast:
      r = SPCCL_FORWARD(real, Broadcast, c.sendbuff, c.recvbuff, c.count, c.datatype, c.root, comm,
                        c.stream);
      break;
    case Collective::Bcast:
      r = SPCCL_FORWARD(real, Bcast, c.recvbuff, c.count, c.datatype, c.root, comm, c.stream);
      break;
    case Collective::Reduce:
      r = SPCCL_FORWARD(real, Reduce, c.sendbuff, c.recvbuff, c.count, c.datatype, c.op, c.root,
                        comm, c.stream);
      break;
    case Collective::AllGather:
      r = SPCCL_FORWARD(real, AllGather, c.sendbuff, c.recvbuff, c.count, c.datatype, comm,
                        c.stream);
      break;
    case Collective::ReduceScatter:
      r = SPCCL_FORWARD(real, ReduceScatter, c.sendbuff, c.recvbuff, c.count, c.datatype, c.op,
                        comm, c.stream);
      break;
    case Collective::AlltoAll:
      r = SPCCL_FORWARD(real, AlltoAll, c.sendbuff, c.recvbuff, c.count, c.datatype, comm,
                        c.stream);
      break;
    case Collective::Gather:
      r = SPCCL_FORWARD(real, Gather, c.sendbuff, c.recvbuff, c.count, c.datatype, c.root, comm,
                        c.stream);
      break;
    case Collective::Scatter:
      r = SPCCL_FORWARD(real, Scatter, c.sendbuff, c.recvbuff, c.count, c.datatype, c.root, comm,
                        c.stream);
      break;
    case Collective::Send:
      r = SPCCL_FORWARD(real, Send, c.sendbuff, c.count, c.datatype, c.root, comm, c.stream);
      break;
    case Collective::Recv:
      r = SPCCL_FORWARD(real, Recv, c.recvbuff, c.count, c.datatype, c.root, comm, c.stream);
      break;
  }
  if (r != ncclSuccess && r != ncclInProgress) noteRealFailure();
  return r;
}

ncclResult_t issue(ncclComm_t handle, const CollCall& call) {
  const Settings& s = settings();
  const bool forward = s.mode == Mode::Forward;
  // Held until the call returns: an ncclCommAbort of another thread waits
  // for it (comm_lease.h). A deferred call is leased again at the group's end.
  const CommLease lease = leaseComm(handle);
  InterposedComm* comm = lease.get();
  if (comm == nullptr) {
    // A real NCCL communicator (or NULL): the real NCCL's business.
    if (forward) return forwardToReal(handle, call);
    return fail(nullptr, ncclInvalidArgument, "%s: comm %p is %s", call.name,
                static_cast<void*>(handle),
                handle == nullptr ? "NULL" : "not a communicator of libspccl_nccl.so");
  }
  if (comm->revoked.load())
    return fail(comm, ncclInvalidUsage, "%s: the communicator was revoked (ncclCommRevoke)",
                call.name);
  bool premul = false;
  PreMulSumOp op;
  if (!forward) {
    const ncclResult_t checked = checkArguments(comm, call, &premul, &op);
    if (checked != ncclSuccess) return checked;
  }
  CallShape shape;
  shape.allReduce = call.kind == Collective::AllReduce;
  shape.datatype = call.datatype;
  shape.op = premul ? ncclSum : call.op;
  shape.bytes = call.count * elementSize(call.datatype);
  shape.nranks = comm->nranks;
  shape.deviceBuffers = memoryKindOf(call.sendbuff) == MemoryKind::Device ||
                        memoryKindOf(call.recvbuff) == MemoryKind::Device;
  Route route = decideRoute(s, shape, inGroup());
  if (route.needsDensity) {
    double density = 1;
    const spcclResult_t agreed = agreedDensity(comm, call, &density);
    if (agreed != spcclSuccess) return finishSpccl(comm, agreed);
    route = routeByDensity(s, route, density);
  }
  switch (route.target) {
    case Target::Nccl: {
      const auto start = std::chrono::steady_clock::now();
      const ncclResult_t r = forwardToReal(comm->real, call);
      if (r == ncclSuccess)
        comm->report.record(
            call.name, pathName(route, s.compress), shape.bytes,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      return r;
    }
    default:
      break;
  }
  if (isPointToPoint(call.kind) && call.root == comm->rank) {
    // spccl has no send to itself: the group's end copies.
    if (!inGroup())
      return fail(comm, ncclInvalidUsage,
                  "%s: peer %d is this rank; its matching call must be in the same group",
                  call.name, call.root);
    void* buffer = call.kind == Collective::Send ? const_cast<void*>(call.sendbuff) : call.recvbuff;
    deferSelfTransfer(lease.shared(), call.kind == Collective::Send, buffer, shape.bytes,
                      call.stream);
    return ncclSuccess;
  }
  SpcclTask task{comm,
                 call,
                 route,
                 premul,
                 shape.deviceBuffers,
                 op,
                 std::make_shared<std::vector<unsigned char>>()};
  if (!inGroup()) return task();
  Operation deferred;
  deferred.comm = lease.shared();
  deferred.spcclGroupable = spcclGroupable(call.kind, route.target);
  deferred.collective = !isPointToPoint(call.kind);
  deferred.run = task;
  defer(std::move(deferred));
  return ncclSuccess;
}

}  // namespace spccl::nccl

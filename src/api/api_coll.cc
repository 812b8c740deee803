// API: collectives, point to point, groups and non-blocking requests.
// Arguments are validated here, with messages that name the argument;
// the algorithms in src/coll receive only valid calls.
#include <memory>
#include <utility>
#include <vector>

#include "api/api_guard.h"
#include "api/arguments.h"
#include "base/check.h"
#include "coll/collective.h"
#include "coll/dense_pieces.h"
#include "coll/device_collectives.h"
#include "coll/root_agreement.h"
#include "core/collective_buffers.h"
#include "core/comm.h"
#include "core/device_collective_call.h"
#include "core/device_group.h"
#include "core/piece_gates.h"
#include "core/staged_call.h"
#include "spccl.h"

using namespace spccl;

namespace {

struct Call {
  CollArgs args;
  CollSignature signature;
  const char* name = "";  // the API function, for errors found while it runs
  void* stream = nullptr;
};

struct DeferredP2P {
  bool isSend;
  void* buffer;
  size_t bytes;
  int peer;
  CollSignature signature;
  void* stream;
};

struct GroupState {
  int depth = 0;
  std::vector<spcclComm_t> comms;  // in order of first appearance
  std::vector<std::pair<spcclComm_t, DeferredP2P>> p2p;
  std::vector<std::pair<spcclComm_t, Call>> collectives;
};
// This thread's open group, or nullptr outside one: made at the outermost
// spcclGroupStart, freed at its spcclGroupEnd. A pointer, not a
// GroupState, because a thread_local with a destructor registers it with
// glibc at its first use (any call's), and glibc aborts the process when
// that registration runs out of memory (tests/faults/alloc_failure.sh
// found it, as for base/check.cc's last error).
thread_local GroupState* tlsGroup = nullptr;

int groupDepth() { return tlsGroup == nullptr ? 0 : tlsGroup->depth; }

// Per peer: displacement + count must not overflow, and the buffers must
// reach that far.
spcclResult_t validateAllToAllv(const CollArgs& a, size_t n, const char* name) {
  SPCCL_CHECK(checkNotNull(name, "sendcounts", a.sendcounts));
  SPCCL_CHECK(checkNotNull(name, "sdispls", a.sdispls));
  SPCCL_CHECK(checkNotNull(name, "recvcounts", a.recvcounts));
  SPCCL_CHECK(checkNotNull(name, "rdispls", a.rdispls));
  const size_t typeSize = spcclTypeSize(a.datatype);
  for (size_t peer = 0; peer < n; ++peer) {
    size_t end = 0;
    if (__builtin_add_overflow(a.sdispls[peer], a.sendcounts[peer], &end) ||
        __builtin_add_overflow(a.rdispls[peer], a.recvcounts[peer], &end))
      return SPCCL_FAIL(spcclInvalidArgument, "%s: displacement + count for rank %zu overflows",
                        name, peer);
    SPCCL_CHECK(checkSize(name, "sendcounts", a.sdispls[peer] + a.sendcounts[peer], typeSize));
    SPCCL_CHECK(checkBuffer(name, "sendbuff", a.sendbuff, a.sendcounts[peer]));
    SPCCL_CHECK(checkSize(name, "recvcounts", a.rdispls[peer] + a.recvcounts[peer], typeSize));
    SPCCL_CHECK(checkBuffer(name, "recvbuff", a.recvbuff, a.recvcounts[peer]));
  }
  return spcclSuccess;
}

spcclResult_t validate(spcclComm_t comm, const Call& call, const void* stream, const char* name) {
  const CollArgs& a = call.args;
  SPCCL_CHECK(checkCommon(name, comm, stream, a.datatype));
  const size_t n = static_cast<size_t>(comm->nranks);
  const size_t typeSize = spcclTypeSize(a.datatype);
  size_t bytes = 0, allBytes = 0;
  switch (a.type) {
    case CollType::AllReduce:
      SPCCL_CHECK(checkOp(name, a.op));
      SPCCL_CHECK(checkSize(name, "count", a.count, typeSize, &bytes));
      return checkSendAndRecv(name, a.sendbuff, a.recvbuff, bytes);
    case CollType::Broadcast:
      SPCCL_CHECK(checkRank(name, "root", a.root, comm->nranks));
      SPCCL_CHECK(checkSize(name, "count", a.count, typeSize, &bytes));
      if (comm->rank == a.root) SPCCL_CHECK(checkBuffer(name, "sendbuff", a.sendbuff, bytes));
      return checkBuffer(name, "recvbuff", a.recvbuff, bytes);
    case CollType::Reduce:
      SPCCL_CHECK(checkOp(name, a.op));
      SPCCL_CHECK(checkRank(name, "root", a.root, comm->nranks));
      SPCCL_CHECK(checkSize(name, "count", a.count, typeSize, &bytes));
      SPCCL_CHECK(checkBuffer(name, "sendbuff", a.sendbuff, bytes));
      if (comm->rank == a.root) SPCCL_CHECK(checkBuffer(name, "recvbuff", a.recvbuff, bytes));
      return spcclSuccess;
    case CollType::AllGather:
      SPCCL_CHECK(checkSize(name, "sendcount", a.count, n * typeSize, &allBytes));
      SPCCL_CHECK(checkBuffer(name, "sendbuff", a.sendbuff, allBytes / n));
      return checkBuffer(name, "recvbuff", a.recvbuff, allBytes);
    case CollType::ReduceScatter:
      SPCCL_CHECK(checkOp(name, a.op));
      SPCCL_CHECK(checkSize(name, "recvcount", a.count, n * typeSize, &allBytes));
      SPCCL_CHECK(checkBuffer(name, "sendbuff", a.sendbuff, allBytes));
      return checkBuffer(name, "recvbuff", a.recvbuff, allBytes / n);
    case CollType::AllToAll:
      SPCCL_CHECK(checkSize(name, "count", a.count, n * typeSize, &allBytes));
      return checkSendAndRecv(name, a.sendbuff, a.recvbuff, allBytes);
    case CollType::AllToAllv:
      return validateAllToAllv(a, n, name);
    case CollType::Barrier:
      return spcclSuccess;
    default:
      return SPCCL_FAIL(spcclInternalError, "%s: unknown collective", name);
  }
}

// The call as the CPU runs it: its buffers where staged put them.
Call onHost(const StagedCall& staged, Call call) {
  call.args.sendbuff = staged.hostView(call.args.sendbuff);
  call.args.recvbuff = staged.hostView(call.args.recvbuff);
  return call;
}

// The call's buffers and their checks; the pinned buffers are taken only
// for a call that runs now (a group's calls are staged at its end).
spcclResult_t stage(spcclComm_t comm, const Call& call, StagedCall& staged, bool runsNow) {
  SPCCL_CHECK(addCollectiveBuffersOfOneKind(staged, call.args, comm->rank, comm->nranks));
  return runsNow ? staged.prepare() : staged.validate();
}

Call makeCall(CollType type, const void* sendbuff, void* recvbuff, size_t count,
              spcclDataType_t datatype, spcclRedOp_t op, int root) {
  Call call;
  call.args.type = type;
  call.args.sendbuff = sendbuff;
  call.args.recvbuff = recvbuff;
  call.args.count = count;
  call.args.datatype = datatype;
  call.args.op = op;
  call.args.root = root;
  bool rooted = type == CollType::Broadcast || type == CollType::Reduce;
  bool reducing =
      type == CollType::AllReduce || type == CollType::Reduce || type == CollType::ReduceScatter;
  call.signature = CollSignature{type, static_cast<uint8_t>(datatype),
                                 static_cast<uint8_t>(reducing ? op : spcclSum), rooted ? root : -1,
                                 type == CollType::AllToAllv ? 0 : count};
  return call;
}

size_t stagingPieceBytes(spcclComm_t comm) { return comm->engine->settings().stagingChunkBytes; }

// The call on ctx, in pieces where it is large (coll/dense_pieces.h). gates:
// where this rank's device buffers arrive piece by piece
// (StagedCall::runCollectiveInPieces); nullptr: every piece is there.
spcclResult_t executeOn(spcclComm_t comm, CollContext& ctx, const Call& call, PieceGates* gates) {
  SPCCL_CHECK(agreeOnRoot(ctx, RootedCallNames{call.name, "root"}));
  const size_t pieceBytes = stagingPieceBytes(comm);
  const size_t pieces = densePieceCount(call.args, pieceBytes);
  if (pieces == 1) return runDenseCollective(ctx, call.args, ctx.denseAlgorithm());
  const int timeoutMs = comm->options.timeoutMs;
  for (size_t k = 0; k < pieces; ++k) {
    if (gates != nullptr && !gates->awaitInput(k, timeoutMs))
      return SPCCL_FAIL(spcclSystemError,
                        "%s: rank %d: piece %zu of %zu of the input did not arrive from the device "
                        "within %d ms (the stream's work before the call is still running)",
                        call.name, ctx.rank(), k, pieces, timeoutMs);
    SPCCL_CHECK(runDensePiece(ctx, call.args, pieceBytes, k, ctx.denseAlgorithm()));
    if (gates != nullptr) gates->pieceRan(k);
  }
  return spcclSuccess;
}

spcclResult_t execute(spcclComm_t comm, const Call& call) {
  return runCollective(*comm->engine, call.signature,
                       [&](CollContext& ctx) { return executeOn(comm, ctx, call, nullptr); });
}

void rememberComm(spcclComm_t comm) {
  for (spcclComm_t c : tlsGroup->comms)
    if (c == comm) return;
  tlsGroup->comms.push_back(comm);
}

// A collective this rank will not run (its arguments). Inside a group it
// would have run after the group's calls queued so far on comm, which have
// not begun: the withdrawal names that later call, and goes out now, while
// nothing else is in flight (the group's sends start at its end).
spcclResult_t reject(spcclComm_t comm, spcclResult_t failure) {
  uint64_t callsAhead = 0;
  if (groupDepth() > 0)
    for (const auto& [c, call] : tlsGroup->collectives) callsAhead += c == comm ? 1 : 0;
  return rejectCall(comm, failure, callsAhead);
}

// Blocking entry: validate, then run now, or on the stream (or at the
// group's end, staged there with the group's other calls).
spcclResult_t submit(spcclComm_t comm, Call call, void* stream, const char* name) {
  clearThreadLastError();
  call.name = name;
  call.stream = stream;
  spcclResult_t res = validate(comm, call, stream, name);
  StagedCall staged(comm, name, stream);
  // The buffers' kinds first (which looks for the driver), then whether
  // a blocking dense collective outside a group runs device-resident
  // (core/device_collective_call.h, coll/device_collectives.h): its
  // buffers are then checked, not staged.
  if (res == spcclSuccess) res = stage(comm, call, staged, /*runsNow=*/false);
  const bool direct = res == spcclSuccess && groupDepth() == 0 &&
                      runsDeviceResident(call.args.type) && joinsDeviceAllReduce(comm);
  if (res == spcclSuccess && groupDepth() == 0 && !direct) res = staged.prepare();
  if (res != spcclSuccess) return reject(comm, res);
  if (direct)
    return finishCall(comm, runDeviceCollectiveCall(comm, staged, call.args, call.signature, name));
  if (groupDepth() > 0) {
    rememberComm(comm);
    tlsGroup->collectives.emplace_back(comm, call);
    return spcclSuccess;
  }
  Call host = onHost(staged, call);
  const size_t pieceBytes = stagingPieceBytes(comm);
  const size_t pieces = densePieceCount(call.args, pieceBytes);
  if (pieces == 1)
    return finishCall(comm, staged.run([comm, host] { return execute(comm, host); }));
  const CollArgs user = call.args;
  const int rank = comm->rank, nranks = comm->nranks;
  return finishCall(comm, staged.runCollectiveInPieces(
                              call.signature, pieces,
                              [user, rank, nranks, pieceBytes](size_t k) {
                                return densePieceRanges(user, rank, nranks, pieceBytes, k);
                              },
                              [comm, host](CollContext& ctx, PieceGates* gates) {
                                return executeOn(comm, ctx, host, gates);
                              }));
}

spcclResult_t submitAsync(spcclComm_t comm, Call call, spcclRequest_t* request, const char* name) {
  clearThreadLastError();
  call.name = name;
  spcclResult_t res = checkNotNull(name, "request", request);
  if (res == spcclSuccess) res = validate(comm, call, nullptr, name);
  if (res == spcclSuccess && groupDepth() > 0)
    res = SPCCL_FAIL(spcclInvalidUsage, "%s: non-blocking calls cannot be grouped", name);
  StagedCall staged(comm, name, nullptr);
  // As in submit: a dense collective may run device-resident, unstaged.
  if (res == spcclSuccess) res = stage(comm, call, staged, /*runsNow=*/false);
  const bool direct =
      res == spcclSuccess && runsDeviceResident(call.args.type) && joinsDeviceAllReduce(comm);
  if (res == spcclSuccess && !direct) res = staged.prepare();
  if (res != spcclSuccess) return reject(comm, res);
  if (direct)
    return finishCall(
        comm, runDeviceCollectiveCall(comm, staged, call.args, call.signature, name, request));
  Call host = onHost(staged, call);
  return finishCall(comm, staged.runQueued([comm, host] { return execute(comm, host); }, request));
}

spcclResult_t submitP2P(bool isSend, void* buffer, size_t count, spcclDataType_t datatype, int peer,
                        spcclComm_t comm, void* stream) {
  const char* name = isSend ? "spcclSend" : "spcclRecv";
  clearThreadLastError();
  spcclResult_t res = checkCommon(name, comm, stream, datatype);
  size_t bytes = 0;
  if (res == spcclSuccess) res = checkSize(name, "count", count, spcclTypeSize(datatype), &bytes);
  if (res == spcclSuccess) res = checkBuffer(name, isSend ? "sendbuff" : "recvbuff", buffer, bytes);
  if (res == spcclSuccess) res = checkRank(name, "peer", peer, comm->nranks);
  if (res == spcclSuccess && peer == comm->rank)
    res = SPCCL_FAIL(spcclInvalidArgument, "%s: peer %d is this rank; copy locally instead", name,
                     peer);
  if (res == spcclSuccess) {
    StagedCall staged(comm, name, stream);
    staged.add(isSend ? "sendbuff" : "recvbuff", buffer, bytes,
               isSend ? device::Access::Read : device::Access::Write);
    res = staged.validate();  // staged, with its group, at the group's end
  }
  if (res != spcclSuccess) return finishCall(comm, res);
  DeferredP2P op{isSend,
                 buffer,
                 bytes,
                 peer,
                 CollSignature{CollType::SendRecv, static_cast<uint8_t>(datatype), 0, -1, count},
                 stream};
  const bool implicitGroup = groupDepth() == 0;
  if (implicitGroup) {
    const spcclResult_t started = spcclGroupStart();  // (out of memory: its error)
    if (started != spcclSuccess) return finishCall(comm, started);
  }
  rememberComm(comm);
  tlsGroup->p2p.emplace_back(comm, op);
  return implicitGroup ? spcclGroupEnd() : spcclSuccess;
}

// Runs a whole group on one communicator: point-to-point operations are
// posted first, then the collectives run in issue order, then the
// point-to-point operations are waited for.
spcclResult_t runGroupOn(spcclComm_t comm, const GroupState& group) {
  Engine& engine = *comm->engine;
  std::vector<int> slots;
  for (const auto& [c, op] : group.p2p) {
    if (c != comm) continue;
    int slot = -1;
    SPCCL_CHECK(op.isSend ? engine.postUserSend(op.peer, op.buffer, op.bytes, op.signature, &slot)
                          : engine.postUserRecv(op.peer, op.buffer, op.bytes, op.signature, &slot));
    slots.push_back(slot);
  }
  for (const auto& [c, call] : group.collectives)
    if (c == comm) SPCCL_CHECK(execute(comm, call));
  return slots.empty() ? spcclSuccess : engine.wait(slots);
}

// The stream of a group's calls on comm; they must agree.
spcclResult_t groupStream(spcclComm_t comm, const GroupState& group, void** stream) {
  bool found = false;
  auto take = [&](spcclComm_t c, void* s) -> spcclResult_t {
    if (c != comm) return spcclSuccess;
    if (found && s != *stream)
      return SPCCL_FAIL(spcclInvalidUsage,
                        "spcclGroupEnd: the group's calls on communicator rank %d use two "
                        "streams (%p and %p); one communicator, one stream per group",
                        comm->rank, *stream, s);
    found = true;
    *stream = s;
    return spcclSuccess;
  };
  for (const auto& [c, op] : group.p2p) SPCCL_CHECK(take(c, op.stream));
  for (const auto& [c, call] : group.collectives) SPCCL_CHECK(take(c, call.stream));
  return spcclSuccess;
}

// A group's calls on comm, staged as one call: copied in together, run
// (runGroupOn), copied out together, at once or on the group's stream.
spcclResult_t runStagedGroupOn(spcclComm_t comm, const GroupState& group) {
  void* stream = nullptr;
  SPCCL_CHECK(groupStream(comm, group, &stream));
  StagedCall staged(comm, "spcclGroupEnd", stream);
  for (const auto& [c, op] : group.p2p)
    if (c == comm)
      staged.add(op.isSend ? "sendbuff" : "recvbuff", op.buffer, op.bytes,
                 op.isSend ? device::Access::Read : device::Access::Write);
  for (const auto& [c, call] : group.collectives)
    if (c == comm) addCollectiveBuffers(staged, call.args, comm->rank, comm->nranks);
  SPCCL_CHECK(staged.prepare());
  GroupState mine;
  for (const auto& [c, op] : group.p2p)
    if (c == comm) {
      DeferredP2P host = op;
      host.buffer = staged.hostView(op.buffer);
      mine.p2p.emplace_back(comm, host);
    }
  for (const auto& [c, call] : group.collectives)
    if (c == comm) mine.collectives.emplace_back(comm, onHost(staged, call));
  return staged.run([comm, mine] { return runGroupOn(comm, mine); });
}

// A group's calls on comm: device-resident where they are all collectives
// that run device-resident, on a communicator that joins
// (core/device_group.h), else staged as one.
spcclResult_t runGroupCallsOn(spcclComm_t comm, const GroupState& group) {
  size_t pointToPoint = 0;
  for (const auto& [c, op] : group.p2p) pointToPoint += c == comm ? 1 : 0;
  std::vector<CollType> types;
  std::vector<GroupedDeviceCall> calls;
  for (const auto& [c, call] : group.collectives)
    if (c == comm) {
      types.push_back(call.args.type);
      calls.push_back(GroupedDeviceCall{call.args, call.signature, call.name, call.stream});
    }
  if (!groupRunsDeviceResident(comm, types, pointToPoint)) return runStagedGroupOn(comm, group);
  void* stream = nullptr;
  SPCCL_CHECK(groupStream(comm, group, &stream));
  return runDeviceResidentGroup(comm, calls);
}

spcclResult_t waitRequest(spcclRequest_t request, bool block, int* done) {
  spcclResult_t result;
  std::string error;
  {
    std::unique_lock<std::mutex> lock(request->state.mutex);
    if (block) request->state.cv.wait(lock, [request] { return request->state.done; });
    if (!request->state.done) {
      *done = 0;
      return spcclSuccess;
    }
    result = request->state.result;
    error = request->state.error;
  }
  if (result != spcclSuccess) {
    failWith(result, __FILE__, __LINE__, "%s", error.c_str());
    // The communicator may be gone (aborted or destroyed before this wait).
    std::lock_guard<std::mutex> lock(request->errorSink->mutex);
    if (request->errorSink->comm != nullptr) request->errorSink->comm->lastError = error;
  }
  *done = 1;
  delete request;
  return result;
}

}  // namespace

extern "C" {

spcclResult_t spcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                             void* stream) {
  return guardCommApi("spcclAllReduce", comm, [&]() -> spcclResult_t {
    return submit(comm, makeCall(CollType::AllReduce, sendbuff, recvbuff, count, datatype, op, -1),
                  stream, "spcclAllReduce");
  });
}

spcclResult_t spcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, int root, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclBroadcast", comm, [&]() -> spcclResult_t {
    return submit(
        comm, makeCall(CollType::Broadcast, sendbuff, recvbuff, count, datatype, spcclSum, root),
        stream, "spcclBroadcast");
  });
}

spcclResult_t spcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                          spcclDataType_t datatype, spcclRedOp_t op, int root, spcclComm_t comm,
                          void* stream) {
  return guardCommApi("spcclReduce", comm, [&]() -> spcclResult_t {
    return submit(comm, makeCall(CollType::Reduce, sendbuff, recvbuff, count, datatype, op, root),
                  stream, "spcclReduce");
  });
}

spcclResult_t spcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                             spcclDataType_t datatype, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclAllGather", comm, [&]() -> spcclResult_t {
    return submit(
        comm, makeCall(CollType::AllGather, sendbuff, recvbuff, sendcount, datatype, spcclSum, -1),
        stream, "spcclAllGather");
  });
}

spcclResult_t spcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                 void* stream) {
  return guardCommApi("spcclReduceScatter", comm, [&]() -> spcclResult_t {
    return submit(
        comm, makeCall(CollType::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1),
        stream, "spcclReduceScatter");
  });
}

spcclResult_t spcclAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                            spcclDataType_t datatype, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclAllToAll", comm, [&]() -> spcclResult_t {
    return submit(comm,
                  makeCall(CollType::AllToAll, sendbuff, recvbuff, count, datatype, spcclSum, -1),
                  stream, "spcclAllToAll");
  });
}

spcclResult_t spcclAllToAllv(const void* sendbuff, const size_t sendcounts[],
                             const size_t sdispls[], void* recvbuff, const size_t recvcounts[],
                             const size_t rdispls[], spcclDataType_t datatype, spcclComm_t comm,
                             void* stream) {
  return guardCommApi("spcclAllToAllv", comm, [&]() -> spcclResult_t {
    Call call = makeCall(CollType::AllToAllv, sendbuff, recvbuff, 0, datatype, spcclSum, -1);
    call.args.sendcounts = sendcounts;
    call.args.sdispls = sdispls;
    call.args.recvcounts = recvcounts;
    call.args.rdispls = rdispls;
    return submit(comm, call, stream, "spcclAllToAllv");
  });
}

spcclResult_t spcclBarrier(spcclComm_t comm, void* stream) {
  return guardCommApi("spcclBarrier", comm, [&]() -> spcclResult_t {
    return submit(comm, makeCall(CollType::Barrier, nullptr, nullptr, 0, spcclUint8, spcclSum, -1),
                  stream, "spcclBarrier");
  });
}

spcclResult_t spcclSend(const void* sendbuff, size_t count, spcclDataType_t datatype, int peer,
                        spcclComm_t comm, void* stream) {
  return guardCommApi("spcclSend", comm, [&]() -> spcclResult_t {
    return submitP2P(true, const_cast<void*>(sendbuff), count, datatype, peer, comm, stream);
  });
}

spcclResult_t spcclRecv(void* recvbuff, size_t count, spcclDataType_t datatype, int peer,
                        spcclComm_t comm, void* stream) {
  return guardCommApi("spcclRecv", comm, [&]() -> spcclResult_t {
    return submitP2P(false, recvbuff, count, datatype, peer, comm, stream);
  });
}

spcclResult_t spcclGroupStart(void) {
  return guardApi("spcclGroupStart", [&]() -> spcclResult_t {
    if (tlsGroup == nullptr) tlsGroup = new GroupState();
    ++tlsGroup->depth;
    return spcclSuccess;
  });
}

spcclResult_t spcclGroupEnd(void) {
  return guardApi("spcclGroupEnd", [&]() -> spcclResult_t {
    if (groupDepth() == 0)
      return SPCCL_FAIL(spcclInvalidUsage, "spcclGroupEnd without a matching spcclGroupStart");
    if (--tlsGroup->depth > 0) return spcclSuccess;
    const std::unique_ptr<const GroupState> owned(std::exchange(tlsGroup, nullptr));
    const GroupState& group = *owned;
    spcclResult_t result = spcclSuccess;
    for (spcclComm_t comm : group.comms) {
      spcclResult_t res = finishCall(comm, runGroupCallsOn(comm, group));
      if (result == spcclSuccess) result = res;
    }
    return result;
  });
}

spcclResult_t spcclIallReduce(const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                              spcclRequest_t* request) {
  return guardCommApi("spcclIallReduce", comm, [&]() -> spcclResult_t {
    return submitAsync(comm,
                       makeCall(CollType::AllReduce, sendbuff, recvbuff, count, datatype, op, -1),
                       request, "spcclIallReduce");
  });
}

spcclResult_t spcclIbroadcast(const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, int root, spcclComm_t comm,
                              spcclRequest_t* request) {
  return guardCommApi("spcclIbroadcast", comm, [&]() -> spcclResult_t {
    return submitAsync(
        comm, makeCall(CollType::Broadcast, sendbuff, recvbuff, count, datatype, spcclSum, root),
        request, "spcclIbroadcast");
  });
}

spcclResult_t spcclIreduce(const void* sendbuff, void* recvbuff, size_t count,
                           spcclDataType_t datatype, spcclRedOp_t op, int root, spcclComm_t comm,
                           spcclRequest_t* request) {
  return guardCommApi("spcclIreduce", comm, [&]() -> spcclResult_t {
    return submitAsync(comm,
                       makeCall(CollType::Reduce, sendbuff, recvbuff, count, datatype, op, root),
                       request, "spcclIreduce");
  });
}

spcclResult_t spcclIallGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                              spcclDataType_t datatype, spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclIallGather", comm, [&]() -> spcclResult_t {
    return submitAsync(
        comm, makeCall(CollType::AllGather, sendbuff, recvbuff, sendcount, datatype, spcclSum, -1),
        request, "spcclIallGather");
  });
}

spcclResult_t spcclIreduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                  spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                  spcclRequest_t* request) {
  return guardCommApi("spcclIreduceScatter", comm, [&]() -> spcclResult_t {
    return submitAsync(
        comm, makeCall(CollType::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1),
        request, "spcclIreduceScatter");
  });
}

spcclResult_t spcclIallToAll(const void* sendbuff, void* recvbuff, size_t count,
                             spcclDataType_t datatype, spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclIallToAll", comm, [&]() -> spcclResult_t {
    return submitAsync(
        comm, makeCall(CollType::AllToAll, sendbuff, recvbuff, count, datatype, spcclSum, -1),
        request, "spcclIallToAll");
  });
}

spcclResult_t spcclIbarrier(spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclIbarrier", comm, [&]() -> spcclResult_t {
    return submitAsync(comm,
                       makeCall(CollType::Barrier, nullptr, nullptr, 0, spcclUint8, spcclSum, -1),
                       request, "spcclIbarrier");
  });
}

spcclResult_t spcclTest(spcclRequest_t request, int* done) {
  return guardApi("spcclTest", [&]() -> spcclResult_t {
    SPCCL_CHECK(checkNotNull("spcclTest", "request", request));
    SPCCL_CHECK(checkNotNull("spcclTest", "done", done));
    return waitRequest(request, false, done);
  });
}

spcclResult_t spcclWait(spcclRequest_t request) {
  return guardApi("spcclWait", [&]() -> spcclResult_t {
    SPCCL_CHECK(checkNotNull("spcclWait", "request", request));
    int done = 0;
    return waitRequest(request, true, &done);
  });
}

}  // extern "C"

#include "coll/device_exchange.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "coll/collective.h"
#include "coll/device_in_place_input.h"
#include "coll/device_reduce_launch.h"
#include "coll/small_allgather.h"
#include "device/cuda_ipc.h"

namespace spccl {

namespace {

using device::CuDevicePtr;
using device::CuStream;

// This process, among those of one host: the pid (a forked child inherits
// the random part but not the pid) mixed with a random number drawn once
// (ranks in other pid namespaces may share a pid).
uint64_t processToken() {
  static const uint64_t random = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return random ^ static_cast<uint64_t>(getpid());
}

// The agreement's frames carry a signature no user call has, so a peer that
// runs the staged collective instead (it did not join: another build, or
// no driver loaded) fails the call at the engine's signature check instead
// of mixing messages. The root field tells the collectives apart
// (runtime/frame.h, deviceAgreementRoot).
CollSignature offerSignature(const DeviceCall& call) {
  return CollSignature{CollType::Internal, static_cast<uint8_t>(call.datatype),
                       static_cast<uint8_t>(call.op), deviceAgreementRoot(call.type), call.count};
}

template <typename T>
spcclResult_t allGather(CollContext& ctx, const T& mine, std::vector<T>* all) {
  all->assign(static_cast<size_t>(ctx.nranks()), T{});
  return allGatherSmall(ctx, &mine, sizeof(T), all->data());
}

bool reduces(CollType type) {
  return type == CollType::AllReduce || type == CollType::ReduceScatter || type == CollType::Reduce;
}

// The bytes of this rank's buffers that the call reads and writes; 0 where
// the rank passes none (a broadcast's non-root sendbuff, a reduce's
// non-root recvbuff).
struct BufferBytes {
  size_t send = 0, recv = 0;
};

// An all-to-allv's buffers: up to the end of its farthest block.
BufferBytes variableBytes(const DeviceCall& call) {
  BufferBytes extent;
  for (size_t peer = 0; peer < call.sendcounts.size(); ++peer) {
    extent.send = std::max(extent.send, call.sdispls[peer] + call.sendcounts[peer]);
    extent.recv = std::max(extent.recv, call.rdispls[peer] + call.recvcounts[peer]);
  }
  const size_t size = spcclTypeSize(call.datatype);
  return {extent.send * size, extent.recv * size};
}

BufferBytes bufferBytes(const DeviceCall& call, int nranks, int rank) {
  if (call.type == CollType::AllToAllv) return variableBytes(call);
  const size_t bytes = call.count * spcclTypeSize(call.datatype);
  const size_t n = static_cast<size_t>(nranks);
  switch (call.type) {
    case CollType::ReduceScatter:
      return {bytes * n, bytes};
    case CollType::AllGather:
      return {bytes, bytes * n};
    case CollType::Broadcast:
      return {rank == call.root ? bytes : 0, bytes};
    case CollType::Reduce:
      return {bytes, rank == call.root ? bytes : 0};
    case CollType::AllToAll:
      return {bytes * n, bytes * n};
    case CollType::Migration:
      return {call.sendBytes, call.recvBytes};
    default:
      return {bytes, bytes};
  }
}

bool buffersOverlap(const DeviceCall& call, const BufferBytes& bytes) {
  const auto* send = static_cast<const unsigned char*>(call.sendbuff);
  const auto* recv = static_cast<const unsigned char*>(call.recvbuff);
  return send < recv + bytes.recv && recv < send + bytes.send;
}

// A reduction whose recvbuff overlaps its sendbuff other than in its
// in-place form (inPlaceOwnBlock), with any number of ranks: this rank
// would write bytes that its peers read in the same step (all-reduce,
// reduce-scatter), or that the kernel still reads as other elements
// (reduce). Every rank then falls back; the staged path copies the input
// in first. The in-place form itself takes the path, a rank whose own
// input a later launch reads reducing from a copy of it
// (coll/device_in_place_input.h).
bool overlapsOutsideInPlaceForm(const DeviceCall& call, const BufferBytes& bytes, int nranks,
                                int rank) {
  if (!reduces(call.type) || bytes.recv == 0 || !buffersOverlap(call, bytes)) return false;
  return !inPlaceOwnBlock(call, nranks, rank).has_value();
}

// An all-to-all whose recvbuff overlaps its sendbuff: peers would read
// blocks this rank overwrites (coll/device_all_to_all.h), so they read a
// copy instead (copyToScratch).
bool allToAllInPlace(const DeviceCall& call, const BufferBytes& bytes) {
  return (call.type == CollType::AllToAll || call.type == CollType::AllToAllv) &&
         buffersOverlap(call, bytes);
}

// A scatter or gather whose root passes recvbuff overlapping sendbuff
// other than exactly at the root's own block of the larger buffer (the
// in-place form, which the schedules handle): the root would write a block
// a peer still reads over IPC (scatter), or copy a peer's block over its
// own input before copying that (gather). Every rank then falls back; the
// staged schedules copy in an order that is right.
bool rootOverlapsOtherBlocks(const DeviceCall& call, const BufferBytes& bytes, int rank) {
  if (call.type != CollType::Migration || rank != call.root || !buffersOverlap(call, bytes))
    return false;
  const auto* send = static_cast<const unsigned char*>(call.sendbuff);
  const auto* recv = static_cast<const unsigned char*>(call.recvbuff);
  const size_t ownBlock = static_cast<size_t>(rank) * std::min(bytes.send, bytes.recv);
  return bytes.send >= bytes.recv ? recv != send + ownBlock : send != recv + ownBlock;
}

// The communicator's scratch as reserveDeviceScratch left it, at least
// `bytes`; an error naming the call where it is smaller.
spcclResult_t takeScratch(device::PeerAllocations& peers, size_t bytes, const char* name,
                          CuDevicePtr* out) {
  if (!peers.scratch().take(bytes, out))
    return SPCCL_FAIL(spcclSystemError, "%s: no device scratch of %zu bytes reserved", name, bytes);
  return spcclSuccess;
}

// An in-place all-to-all(v)'s send data, copied to the communicator's
// scratch (device/peer_readable_scratch.h) at the offsets it has in
// sendbuff, so that the schedule reads every block there, this rank's own
// included, as it would read sendbuff. An all-to-allv copies its whole
// extent up to the farthest block, gaps included: one copy where the
// blocks would take up to n, and the peers' displacements hold as they
// are; a gap costs only its bytes (blocks are usually packed).
//
// Why no barrier: the copy is finished (the stream synchronised) before
// this rank's offer goes out, and no peer reads before it has gathered
// every offer. The scratch is free for it: the previous call that used it
// ended with the schedule's barrier, after the peers' reads.
//
// The scratch was reserved on the caller's thread (reserveDeviceScratch):
// cuMemAlloc may wait for the device, and so for the stream this call
// holds. The body only takes it; where it is smaller (the reservation
// failed), the call falls back.
spcclResult_t copyToScratch(const DeviceCall& call, size_t bytes, device::PeerAllocations& peers,
                            CuDevicePtr* out) {
  SPCCL_CHECK(takeScratch(peers, bytes, call.name, out));
  CuStream stream = nullptr;
  SPCCL_CHECK(peers.stream(&stream));
  const char* what = "copying sendbuff to the scratch the peers read (in place)";
  SPCCL_CHECK(copyOnStream(*out, reinterpret_cast<CuDevicePtr>(call.sendbuff), bytes, stream,
                           call.name, what));
  return synchronizeDeviceStream(stream, call.name, what);
}

// This rank's offer: usable only with device buffers it can export, the
// kernels where the call reduces, buffers that overlap only in the
// in-place form, and the scratch that form needs (its reservation may
// have failed). An in-place all-to-all(v) exports its scratch copy
// instead of sendbuff.
DeviceOffer makeOffer(CollContext& ctx, const DeviceCall& call, device::PeerAllocations& peers,
                      const DeviceSchedule& schedule) {
  DeviceOffer offer;
  const BufferBytes bytes = bufferBytes(call, ctx.nranks(), ctx.rank());
  // An all-to-allv rank with nothing to send or receive (one that routed
  // no tokens) needs no memory on the path, whatever its buffers are (a
  // zero-size tensor's may be null): it offers with nothing exported and
  // no device (kIdleDevice), copies nothing, and its peers keep the path.
  if (call.type == CollType::AllToAllv && bytes.send + bytes.recv == 0) {
    offer.usable = deviceAllReduceAvailable() ? 1 : 0;
    offer.device = kIdleDevice;
    return offer;
  }
  // (An all-to-allv's count is unused.)
  const bool empty = call.type != CollType::AllToAllv && call.count == 0;
  if (!call.device || empty || !deviceAllReduceAvailable()) return offer;
  if (overlapsOutsideInPlaceForm(call, bytes, ctx.nranks(), ctx.rank())) return offer;
  if (rootOverlapsOtherBlocks(call, bytes, ctx.rank())) return offer;
  // Peer access was checked for the creation device only.
  if (peers.deviceLocation() == 0 || peers.deviceLocation() != call.creationDevice) return offer;
  // Loaded already by prepareDeviceAllReduce (a cached lookup here); a
  // module that does not load makes the call fall back.
  if (reduces(call.type) && !deviceReduceLoaded(call.datatype, call.op)) return offer;
  // Where the scratch cannot be had or filled, the call falls back, as for
  // a buffer that cannot be exported below: an in-place reduction's copy
  // of its own input is made in the schedule (reduceFromOwnInputCopy),
  // which finds the scratch here already.
  const size_t ownInputCopy = inPlaceInputScratchBytes(call, ctx.nranks(), ctx.rank());
  CuDevicePtr reserved = 0;
  if (ownInputCopy > 0 && !peers.scratch().take(ownInputCopy, &reserved)) return offer;
  const void* send = call.sendbuff;
  if (allToAllInPlace(call, bytes)) {
    CuDevicePtr scratch = 0;
    if (copyToScratch(call, bytes.send, peers, &scratch) != spcclSuccess) return offer;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address, exported as sendbuff is
    send = reinterpret_cast<const void*>(scratch);
  }
  // A buffer that cannot be exported (not from cuMemAlloc, e.g. managed
  // memory) is no error here: the call falls back. The message stays in
  // the thread's last error only. The receive buffer is exported only
  // where peers read it; it must still be device memory of this context,
  // which the staging checks found (call.device, one kind for both).
  if (bytes.send > 0 &&
      device::exportDeviceRange(send, bytes.send, "sendbuff", &offer.send) != spcclSuccess)
    return offer;
  if (schedule.peersReadRecv && bytes.recv > 0 &&
      device::exportDeviceRange(call.recvbuff, bytes.recv, "recvbuff", &offer.recv) != spcclSuccess)
    return offer;
  offer.sendPointer = reinterpret_cast<uint64_t>(send);
  offer.recvPointer = reinterpret_cast<uint64_t>(call.recvbuff);
  offer.device = peers.deviceLocation();
  offer.usable = 1;
  return offer;
}

// Ranks of one process use each other's pointers as they are, and a
// kernel reads another device's memory only after cuCtxEnablePeerAccess
// (IPC handles enable it when opened), which spccl does not call: such
// ranks on different devices fall back.
bool oneProcessOnTwoDevices(const std::vector<DeviceOffer>& offers) {
  for (const DeviceOffer& a : offers)
    for (const DeviceOffer& b : offers)
      if (a.process == b.process && a.device != b.device && a.device != kIdleDevice &&
          b.device != kIdleDevice)
        return true;
  return false;
}

// A peer's buffer at `range`, opened in this process. A rank of this same
// process (threads, or several communicators): its pointer as it is (one
// address space; the driver refuses to open a process's own handle).
spcclResult_t peerPointer(device::PeerAllocations& peers, int rank, const DeviceOffer& offer,
                          const device::ExportedDeviceRange& range, uint64_t pointer,
                          CuDevicePtr* out) {
  if (offer.process == processToken()) {
    *out = pointer;
    return spcclSuccess;
  }
  CuDevicePtr base = 0;
  SPCCL_CHECK(peers.open(rank, range.handle, &base));
  *out = base + range.offset;
  return spcclSuccess;
}

// Some rank cannot take the device path: the CPU collective, this rank's
// device buffers copied through host memory on the communicator's
// non-blocking stream (never the legacy stream, which would wait for the
// caller's stream that this call holds).
spcclResult_t runOnHost(CollContext& ctx, const DeviceCall& call, device::PeerAllocations& peers) {
  CollArgs args;
  args.type = call.type;
  args.sendbuff = call.sendbuff;
  args.recvbuff = call.recvbuff;
  args.count = call.count;
  args.datatype = call.datatype;
  args.op = call.op;
  args.root = call.root;
  if (call.type == CollType::AllToAllv) {
    args.sendcounts = call.sendcounts.data();
    args.sdispls = call.sdispls.data();
    args.recvcounts = call.recvcounts.data();
    args.rdispls = call.rdispls.data();
  }
  auto runOnCpu = [&ctx, &call](const CollArgs& on) {
    return call.hostRun != nullptr ? call.hostRun(ctx, on)
                                   : runDenseCollective(ctx, on, ctx.denseAlgorithm());
  };
  if (!call.device) return runOnCpu(args);
  const BufferBytes bytes = bufferBytes(call, ctx.nranks(), ctx.rank());
  std::vector<unsigned char> send(bytes.send), recv(bytes.recv);
  CuStream stream = nullptr;
  auto copy = [&](CuDevicePtr to, CuDevicePtr from, size_t size, const char* what) {
    SPCCL_CHECK(copyOnStream(to, from, size, stream, call.name, what));
    return synchronizeDeviceStream(stream, call.name, what);
  };
  auto copyIn = [&]() -> spcclResult_t {
    SPCCL_CHECK(peers.stream(&stream));
    if (bytes.send > 0) {
      SPCCL_CHECK(copy(reinterpret_cast<CuDevicePtr>(send.data()),
                       reinterpret_cast<CuDevicePtr>(call.sendbuff), bytes.send,
                       "copying sendbuff in"));
      args.sendbuff = send.data();
    }
    // Apart on the host even where they overlap on the device (in place):
    // the CPU collective's result is the same out of place.
    if (bytes.recv > 0) args.recvbuff = recv.data();
    // An all-to-allv leaves the gaps between its blocks as they were: they
    // go back out with the blocks, so they come in first.
    if (bytes.recv > 0 && call.type == CollType::AllToAllv)
      SPCCL_CHECK(copy(reinterpret_cast<CuDevicePtr>(recv.data()),
                       reinterpret_cast<CuDevicePtr>(call.recvbuff), bytes.recv,
                       "copying recvbuff in"));
    return spcclSuccess;
  };
  // The peers are already in the CPU collective, waiting for this rank:
  // a failure before it breaks the engine, which tells them at once (as
  // runDeviceCodecs does), instead of leaving them to their deadline.
  const spcclResult_t in = copyIn();
  if (in != spcclSuccess) {
    const std::string why = threadLastError();
    ctx.abortCall(in, why);  // the peers' error names this rank (Engine::abort)
    return failWith(in, __FILE__, __LINE__, "%s", why.c_str());
  }
  SPCCL_CHECK(runOnCpu(args));
  if (bytes.recv == 0) return spcclSuccess;
  return copy(reinterpret_cast<CuDevicePtr>(call.recvbuff),
              reinterpret_cast<CuDevicePtr>(recv.data()), bytes.recv, "copying recvbuff out");
}

}  // namespace

spcclResult_t DeviceBuffers::send(int rank, CuDevicePtr* out) const {
  const DeviceOffer& o = offers_[static_cast<size_t>(rank)];
  return peerPointer(peers_, rank, o, o.send, o.sendPointer, out);
}

spcclResult_t DeviceBuffers::recv(int rank, CuDevicePtr* out) const {
  const DeviceOffer& o = offers_[static_cast<size_t>(rank)];
  return peerPointer(peers_, rank, o, o.recv, o.recvPointer, out);
}

spcclResult_t DeviceBuffers::scratch(size_t bytes, const char* name, CuDevicePtr* out) const {
  return takeScratch(peers_, bytes, name, out);
}

spcclResult_t deviceBarrier(CollContext& ctx, const DeviceCall& call, const char* step,
                            spcclResult_t mine) {
  // A failed rank keeps its own error, even when a peer that learnt of it
  // first aborted the exchange.
  const std::string why = mine != spcclSuccess ? threadLastError() : std::string();
  std::vector<int32_t> all;
  const spcclResult_t gathered = allGather(ctx, static_cast<int32_t>(mine), &all);
  if (mine != spcclSuccess) return failWith(mine, __FILE__, __LINE__, "%s", why.c_str());
  SPCCL_CHECK(gathered);
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != spcclSuccess)
      return SPCCL_FAIL(spcclRemoteError, "%s: rank %zu failed %s of the device-resident call",
                        call.name, r, step);
  return spcclSuccess;
}

spcclResult_t reserveDeviceScratch(const DeviceCall& call, int nranks, int rank,
                                   device::PeerAllocations& peers) {
  if (!call.device) return spcclSuccess;
  const BufferBytes bytes = bufferBytes(call, nranks, rank);
  const size_t needed =
      allToAllInPlace(call, bytes) ? bytes.send : inPlaceInputScratchBytes(call, nranks, rank);
  if (needed == 0) return spcclSuccess;
  // Only in the context the communicator's device memory belongs to: a
  // call from another one fails in the body, and must not leave a scratch
  // there for later calls to use.
  SPCCL_CHECK(peers.bindContext(call.name));
  CuDevicePtr scratch = 0;
  return peers.scratch().reserve(needed, call.name, &scratch);
}

spcclResult_t synchronizeDeviceStream(CuStream stream, const char* name, const char* what) {
  const device::CuResult result = device::cudaDriver()->streamSynchronize(stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", name, what,
                      device::describeCuError("cuStreamSynchronize", result).c_str());
  return spcclSuccess;
}

spcclResult_t finishQueuedCopies(spcclResult_t queued, CuStream stream, const char* name,
                                 const char* what) {
  if (stream == nullptr) return queued;
  const spcclResult_t synchronized = synchronizeDeviceStream(stream, name, what);
  return queued != spcclSuccess ? queued : synchronized;
}

spcclResult_t copyOnStream(CuDevicePtr to, CuDevicePtr from, size_t bytes, CuStream stream,
                           const char* name, const char* what) {
  if (bytes == 0 || to == from) return spcclSuccess;
  const device::CuResult result = device::cudaDriver()->memcpyAsync(to, from, bytes, stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", name, what,
                      device::describeCuError("cuMemcpyAsync", result).c_str());
  return spcclSuccess;
}

spcclResult_t runDeviceResident(CollContext& ctx, const DeviceCall& call,
                                device::PeerAllocations& peers, const DeviceSchedule& schedule,
                                bool* onDevices) {
  *onDevices = false;
  // A failure here still takes part in the agreement, so that every rank
  // ends the call at once instead of waiting for this one.
  const spcclResult_t bound = call.device ? peers.bindContext(call.name) : spcclSuccess;
  DeviceOffer mine = bound == spcclSuccess ? makeOffer(ctx, call, peers, schedule) : DeviceOffer{};
  mine.failure = bound;
  mine.process = processToken();
  const std::string why = bound != spcclSuccess ? threadLastError() : std::string();
  std::vector<DeviceOffer> offers;
  spcclResult_t gathered = spcclSuccess;
  {
    CollContext agreement(ctx, offerSignature(call));
    gathered = allGather(agreement, mine, &offers);
  }
  if (bound != spcclSuccess) return failWith(bound, __FILE__, __LINE__, "%s", why.c_str());
  SPCCL_CHECK(gathered);
  for (size_t r = 0; r < offers.size(); ++r)
    if (offers[r].failure != spcclSuccess)
      return SPCCL_FAIL(spcclRemoteError, "%s: rank %zu cannot run the call (its error names why)",
                        call.name, r);
  const bool everyRank =
      std::all_of(offers.begin(), offers.end(), [](const DeviceOffer& o) { return o.usable != 0; });
  if (!everyRank || oneProcessOnTwoDevices(offers)) return runOnHost(ctx, call, peers);
  ctx.noteChoice("device_ipc", "every rank on one host with device buffers and CUDA IPC");
  *onDevices = true;
  const device::PeerAllocations::OneCall opens(peers);  // none evicted before the end
  return schedule.run(ctx, call, DeviceBuffers(offers, peers));
}

}  // namespace spccl

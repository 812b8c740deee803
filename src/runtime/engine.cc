#include "runtime/engine.h"

#include <poll.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <new>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "runtime/flight_recorder.h"
#include "runtime/frame_checksum.h"
#include "runtime/lane_split.h"

namespace spccl {

namespace {
constexpr int64_t kNoFdPollMs = 1;      // transports without an fd are re-tested this often
constexpr int64_t kMaxSleepMs = 100;    // re-check deadlines at least this often
constexpr int64_t kAbortFlushMs = 500;  // best effort to deliver abort frames
constexpr int64_t kAbortGraceMs = 200;  // a lost peer's abort may still be on its way
}  // namespace

Engine::Engine(const EngineSettings& settings, std::vector<PeerConnection> peers)
    : settings_(settings), peers_(peers.size()) {
  for (size_t i = 0; i < peers.size(); ++i) {
    peers_[i].conn = std::move(peers[i]);
    peers_[i].payloadSendRequests.assign(peers_[i].conn.lanes.size(), nullptr);
    peers_[i].payloadRecvSizes.assign(peers_[i].conn.lanes.size(), 0);
    peers_[i].payloadRecvRequests.assign(peers_[i].conn.lanes.size(), nullptr);
    peers_[i].controlClosed = peers_[i].conn.control.recvComm == nullptr;
  }
  if (settings_.flightRecords > 0)
    flight_ = std::make_unique<FlightRecorder>(settings_.flightRecords, settings_.commId,
                                               settings_.rank, settings_.nranks);
}

Engine::~Engine() {
  QuietFailures quiet;  // peers that left first make these sends fail
  if (!broken()) {
    FrameHeader header;
    header.kind = static_cast<uint16_t>(FrameKind::Close);
    header.commId = settings_.commId;
    header.srcRank = settings_.rank;
    try {
      std::vector<unsigned char> frame(sizeof(header));
      std::memcpy(frame.data(), &header, sizeof(header));
      broadcastControlFrame(frame, /*onControl=*/false);  // behind our last data
    } catch (const std::bad_alloc&) {
      // Out of memory in a destructor, which must not throw: no Close
      // frame, so a peer still inside a call sees the connection end
      // instead ("lost the connection to rank ..."), as if this rank had
      // exited.
    }
  }
  for (Peer& peer : peers_) closePeerConnection(peer.conn);
}

void closePeerConnection(PeerConnection& conn) {
  if (conn.net == nullptr) return;
  auto close = [&conn](Lane& lane) {
    if (lane.sendComm) conn.net->closeSend(lane.sendComm);
    if (lane.recvComm) conn.net->closeRecv(lane.recvComm);
    lane = Lane{};
  };
  for (Lane& lane : conn.lanes) close(lane);
  close(conn.control);
}

const kernels::KernelTable& Engine::kernels() const { return kernels::cpuKernels(); }

void* Engine::scratch(size_t bytes, int slot) {
  if (slot < 0) slot = 0;
  if (static_cast<size_t>(slot) >= scratch_.size()) {
    scratch_.resize(slot + 1);
    scratchSize_.resize(slot + 1, 0);
  }
  if (scratchSize_[slot] < bytes || !scratch_[slot]) {
    size_t size = std::max<size_t>(bytes, 64);
    scratch_[slot].reset(new unsigned char[size]);
    scratchSize_[slot] = size;
  }
  return scratch_[slot].get();
}

int Engine::peerIndex(const Peer& peer) const { return static_cast<int>(&peer - peers_.data()); }

uint64_t Engine::collectiveSeq(const FrameHeader& header) {
  return header.collType == static_cast<uint8_t>(CollType::SendRecv) ? 0 : header.seq;
}

spcclResult_t Engine::beginCollective(const CollSignature& signature, uint64_t* seq) {
  if (broken())
    return SPCCL_FAIL(brokenCode_, "communicator is unusable after an earlier error: %s",
                      brokenReason_.c_str());
  for (Peer& peer : peers_) {
    peer.sendStep = 0;
    peer.recvStep = 0;
  }
  *seq = nextSeq_++;
  SPCCL_TRACE(kLogColl, "rank %d begins call #%" PRIu64 " %s", settings_.rank, *seq,
              signature.describe().c_str());
  for (const Withdrawal& withdrawal : pendingWithdrawals_)
    if (withdrawal.seq == *seq) return failWithdrawn(withdrawal);
  return spcclSuccess;
}

// Withdrawals. A rank that rejects a call's arguments does not begin it, so
// its next call reuses the sequence number: withdrawing from call S never
// consumes S. The frame travels on lane 0, ahead of any data the rank sends
// for the S it calls next, so a peer always reads the withdrawal first.
// The peer then decides by its own sequence:
//  - it rejected S too: ignore (every rank that rejects the same call goes
//    on in step);
//  - it began S: fail now, and break the communicator, since this rank may
//    already have sent S's data to others;
//  - it has not reached S: keep it, and fail S when it begins (or drop it
//    when it rejects S as well).
void Engine::withdraw(spcclResult_t code, const std::string& why, uint64_t callsAhead) {
  if (broken() || settings_.nranks == 1) return;
  const uint64_t seq = nextSeq_ + callsAhead;
  withdrawnCalls_[seq].why = why;
  std::erase_if(pendingWithdrawals_, [seq](const Withdrawal& w) { return w.seq == seq; });
  SPCCL_INFO(kLogColl, "rank %d withdraws from call #%" PRIu64 ": %s", settings_.rank, seq,
             why.c_str());
  QuietFailures quiet;  // a peer that went away learns nothing; its loss shows at the next call
  broadcastControlFrame(textFrame(FrameKind::Withdraw, seq, code, why), /*onControl=*/false);
}

spcclResult_t Engine::withdrawnBy(Peer& peer, const unsigned char* frame) {
  FrameHeader header;
  std::memcpy(&header, frame, sizeof(header));
  if (auto mine = withdrawnCalls_.find(header.seq); mine != withdrawnCalls_.end()) {
    mine->second.peersAlso.insert(header.srcRank);
    return spcclSuccess;
  }
  Withdrawal withdrawal{
      header.seq, peer.conn.name,
      std::string(reinterpret_cast<const char*>(frame) + sizeof(FrameHeader), header.length)};
  if (header.seq >= nextSeq_) {
    pendingWithdrawals_.push_back(std::move(withdrawal));
    return spcclSuccess;
  }
  return failWithdrawn(withdrawal);
}

spcclResult_t Engine::failMismatch(const Peer& peer, const FrameHeader& header,
                                   spcclResult_t mismatch) {
  auto mine = withdrawnCalls_.find(header.seq);
  if (mine == withdrawnCalls_.end() || mine->second.peersAlso.count(header.srcRank))
    return breakWith(mismatch);
  return breakWith(SPCCL_FAIL(spcclInvalidUsage,
                              "call #%" PRIu64 ": this rank rejected its arguments (%s), but %s "
                              "went on with it",
                              header.seq, mine->second.why.c_str(), peer.conn.name.c_str()));
}

spcclResult_t Engine::failWithdrawn(const Withdrawal& withdrawal) {
  return breakWith(SPCCL_FAIL(spcclInvalidUsage,
                              "call #%" PRIu64 " cannot complete: %s rejected its arguments and "
                              "takes no part in it (%s)",
                              withdrawal.seq, withdrawal.peerName.c_str(),
                              withdrawal.text.c_str()));
}

spcclResult_t Engine::allocOp(int* slot) {
  if (freeOps_.empty()) {
    ops_.emplace_back();
    *slot = static_cast<int>(ops_.size()) - 1;
  } else {
    *slot = freeOps_.back();
    freeOps_.pop_back();
  }
  ops_[*slot] = Op{};
  ops_[*slot].inUse = true;
  return spcclSuccess;
}

spcclResult_t Engine::checkPeer(int peer, const char* what) {
  if (peer < 0 || peer >= settings_.nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: peer %d is out of range [0, %d)", what, peer,
                      settings_.nranks);
  if (peer == settings_.rank)
    return SPCCL_FAIL(spcclInternalError, "%s: rank %d addressed itself", what, peer);
  if (broken())
    return SPCCL_FAIL(brokenCode_, "communicator is unusable after an earlier error: %s",
                      brokenReason_.c_str());
  if (peers_[peer].closed)
    return connectionLost(peers_[peer], std::string(what) + ": " + peers_[peer].conn.name +
                                            " is gone: " + peers_[peer].closeReason);
  return spcclSuccess;
}

spcclResult_t Engine::postSend(int peer, const void* data, size_t bytes, const CollSignature& sig,
                               uint64_t seq, uint8_t flags, int* slot) {
  SPCCL_CHECK(checkPeer(peer, "send"));
  SPCCL_CHECK(allocOp(slot));
  Op& op = ops_[*slot];
  op.isSend = true;
  op.peer = peer;
  op.sendData = data;
  op.bytes = bytes;
  op.header.commId = settings_.commId;
  op.header.seq = seq;
  op.header.step = peers_[peer].sendStep++;
  op.header.setSignature(sig);
  op.header.srcRank = settings_.rank;
  op.header.length = bytes;
  op.header.flags = flags;
  if (settings_.wireChecksum) op.header.reserved = frameChecksum(op.header, data, bytes);
  peers_[peer].sendQueue.push_back(*slot);
  return progressSend(peers_[peer]);
}

spcclResult_t Engine::postRecv(int peer, void* data, size_t capacity, const CollSignature& sig,
                               uint64_t seq, int* slot) {
  SPCCL_CHECK(checkPeer(peer, "receive"));
  SPCCL_CHECK(allocOp(slot));
  Op& op = ops_[*slot];
  op.isSend = false;
  op.peer = peer;
  op.recvData = data;
  op.bytes = capacity;
  op.expectation.commId = settings_.commId;
  op.expectation.seq = seq;
  op.expectation.step = peers_[peer].recvStep++;
  op.expectation.srcRank = peer;
  op.expectation.signature = sig;
  op.expectation.capacity = capacity;
  peers_[peer].recvQueue.push_back(*slot);
  return spcclSuccess;
}

spcclResult_t Engine::postUserSend(int peer, const void* data, size_t bytes,
                                   const CollSignature& sig, int* slot) {
  SPCCL_CHECK(checkPeer(peer, "spcclSend"));
  uint64_t seq = peers_[peer].userSendSeq++;
  uint32_t savedStep = peers_[peer].sendStep;
  peers_[peer].sendStep = 0;
  spcclResult_t res = postSend(peer, data, bytes, sig, seq, 0, slot);
  peers_[peer].sendStep = savedStep;
  return res;
}

spcclResult_t Engine::postUserRecv(int peer, void* data, size_t capacity, const CollSignature& sig,
                                   int* slot) {
  SPCCL_CHECK(checkPeer(peer, "spcclRecv"));
  uint64_t seq = peers_[peer].userRecvSeq++;
  uint32_t savedStep = peers_[peer].recvStep;
  peers_[peer].recvStep = 0;
  spcclResult_t res = postRecv(peer, data, capacity, sig, seq, slot);
  peers_[peer].recvStep = savedStep;
  return res;
}

spcclResult_t Engine::testRequest(void** request, const spcclNet_v2_t* net, bool* done,
                                  size_t* size) {
  if (*request == nullptr) {
    *done = true;
    return spcclSuccess;
  }
  int finished = 0;
  size_t bytes = 0;
  spcclResult_t res = net->test(*request, &finished, &bytes);
  if (res != spcclSuccess) {
    *request = nullptr;  // released by the transport on error
    return res;
  }
  *done = finished != 0;
  if (*done) {
    *request = nullptr;
    if (size) *size = bytes;
  }
  return spcclSuccess;
}

spcclResult_t Engine::postPayload(Peer& peer, bool isSend, void* data, size_t bytes) {
  const int lanes = static_cast<int>(peer.conn.lanes.size());
  const int used = lanesUsed(bytes, lanes, settings_.stripeMinBytes);
  for (int l = 0; l < used; ++l) {
    LaneSlice slice = laneSlice(bytes, lanes, settings_.stripeMinBytes, l);
    char* at = static_cast<char*>(data) + slice.offset;
    const Lane& lane = peer.conn.lanes[l];
    spcclResult_t res = isSend ? peer.conn.net->isend(lane.sendComm, at, slice.bytes, nullptr,
                                                      &peer.payloadSendRequests[l])
                               : peer.conn.net->irecv(lane.recvComm, at, slice.bytes, nullptr,
                                                      &peer.payloadRecvRequests[l]);
    if (res != spcclSuccess) return res;
  }
  return spcclSuccess;
}

spcclResult_t Engine::testPayload(Peer& peer, std::vector<void*>& requests, bool* done,
                                  std::vector<size_t>* sizes) {
  *done = true;
  for (size_t l = 0; l < requests.size(); ++l) {
    bool laneDone = false;
    size_t size = 0;
    const bool pending = requests[l] != nullptr;
    SPCCL_CHECK(testRequest(&requests[l], peer.conn.net, &laneDone, &size));
    if (pending && laneDone && sizes != nullptr) (*sizes)[l] = size;
    *done = *done && laneDone;
  }
  return spcclSuccess;
}

spcclResult_t Engine::checkPayload(const Peer& peer, const FrameHeader& header,
                                   const void* data) const {
  // A transport delivers whole messages of at most the posted size, so a
  // shorter one (a peer that sent less than its header announced, or a
  // header where its payload belonged) must be caught here: the rest of the
  // buffer would pass for data.
  const int lanes = static_cast<int>(peer.conn.lanes.size());
  // An empty payload is never posted (progressRecv), so no lane has a size.
  const int used =
      header.length == 0 ? 0 : lanesUsed(header.length, lanes, settings_.stripeMinBytes);
  for (int l = 0; l < used; ++l) {
    const LaneSlice slice = laneSlice(header.length, lanes, settings_.stripeMinBytes, l);
    if (peer.payloadRecvSizes[l] != slice.bytes)
      return SPCCL_FAIL(spcclRemoteError,
                        "message %u from %s in call #%" PRIu64
                        " %s: %zu bytes arrived on lane %d where its header announced %zu",
                        header.step, peer.conn.name.c_str(), header.seq,
                        header.signature().describe().c_str(), peer.payloadRecvSizes[l], l,
                        slice.bytes);
  }
  if (settings_.wireChecksum) {
    const uint32_t computed = frameChecksum(header, data, header.length);
    if (computed != header.reserved)
      return SPCCL_FAIL(spcclRemoteError,
                        "message %u from %s in call #%" PRIu64
                        " %s failed its checksum (CRC32C %08x, the frame says %08x): altered "
                        "between the ranks (SPCCL_WIRE_CHECKSUM)",
                        header.step, peer.conn.name.c_str(), header.seq,
                        header.signature().describe().c_str(), computed, header.reserved);
  }
  return spcclSuccess;
}

spcclResult_t Engine::progressSend(Peer& peer) {
  const spcclNet_v2_t* net = peer.conn.net;
  while (!peer.sendQueue.empty()) {
    Op& op = ops_[peer.sendQueue.front()];
    if (op.state == OpState::Queued) {
      spcclResult_t res = net->isend(peer.conn.lanes[0].sendComm, &op.header, sizeof(FrameHeader),
                                     nullptr, &peer.headerSendRequest);
      if (res == spcclSuccess && op.bytes > 0)
        res = postPayload(peer, true, const_cast<void*>(op.sendData), op.bytes);
      if (res != spcclSuccess) return failedSendingTo(peer);
      op.state = OpState::Posted;
    }
    bool headerDone = false, payloadDone = false;
    spcclResult_t res = testRequest(&peer.headerSendRequest, net, &headerDone, nullptr);
    if (res == spcclSuccess) res = testPayload(peer, peer.payloadSendRequests, &payloadDone);
    if (res != spcclSuccess) return failedSendingTo(peer);
    if (!headerDone || !payloadDone) return spcclSuccess;
    op.state = OpState::Done;
    counters_.bytesSent += op.bytes;
    counters_.messagesSent += 1;
    if (flight_) flight_->noteSent(peerIndex(peer), collectiveSeq(op.header), op.bytes);
    peer.sendQueue.pop_front();
  }
  return spcclSuccess;
}

std::string Engine::lostConnectionText(const Peer& peer) {
  return "lost the connection to " + peer.conn.name + ": " + threadLastError();
}

spcclResult_t Engine::failedSendingTo(Peer& peer) {
  // A copy: progressRecv below may set the thread's last error.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  std::string cause = threadLastError();
  peer.headerSendRequest = nullptr;
  std::fill(peer.payloadSendRequests.begin(), peer.payloadSendRequests.end(), nullptr);
  peer.sendQueue.clear();
  {
    QuietFailures quiet;
    progressRecv(peer);  // a Close frame may explain the hang-up
  }
  if (broken()) {
    setThreadLastError(brokenReason_);
    return brokenCode_;
  }
  return connectionLost(peer, "sending to " + peer.conn.name + " failed: " + cause);
}

spcclResult_t Engine::connectionLost(Peer& peer, const std::string& failure) {
  // A peer that hung up on us usually said why first, on its control
  // connection, which is not ordered with the lanes: give its Abort a moment
  // to arrive (none is needed when the control connection ended too, as it
  // does when the process died) and report that cause instead.
  Deadline grace(kAbortGraceMs);
  while (!broken() && !peer.controlClosed) {
    {
      QuietFailures quiet;
      peer.controlMayHaveData = true;
      progressControl(peer);
    }
    if (broken() || peer.controlClosed || grace.expired()) break;
    pollfd pfd{-1, 0, 0};
    peer.conn.net->pollFd(peer.conn.control.recvComm, &pfd.fd, &pfd.events);
    ::poll(&pfd, pfd.fd < 0 ? 0 : 1, static_cast<int>(std::min<int64_t>(grace.remainingMs(), 10)));
  }
  if (broken()) {
    setThreadLastError(brokenReason_);
    return brokenCode_;
  }
  peer.closed = true;
  return breakWith(SPCCL_FAIL(spcclRemoteError, "%s", failure.c_str()));
}

spcclResult_t Engine::progressRecv(Peer& peer) {
  const spcclNet_v2_t* net = peer.conn.net;
  for (;;) {
    if (!peer.headerParked) {
      if (peer.headerRecvRequest == nullptr) {
        if (peer.closed) {
          if (!peer.recvQueue.empty())
            return connectionLost(peer, peer.conn.name +
                                            " is gone while this rank still expects data from "
                                            "it: " +
                                            peer.closeReason);
          return spcclSuccess;
        }
        spcclResult_t res = net->irecv(peer.conn.lanes[0].recvComm, peer.inbox, sizeof(peer.inbox),
                                       nullptr, &peer.headerRecvRequest);
        if (res != spcclSuccess)
          return breakWith(SPCCL_FAIL(spcclRemoteError, "receiving from %s failed: %s",
                                      peer.conn.name.c_str(), threadLastError().c_str()));
      }
      bool done = false;
      size_t size = 0;
      spcclResult_t res = testRequest(&peer.headerRecvRequest, net, &done, &size);
      if (res != spcclSuccess) {
        // Between messages: fatal only once something needs this peer.
        peer.closed = true;
        peer.closeReason =
            "its connection ended without a goodbye (process died?): " + threadLastError();
        if (!peer.recvQueue.empty()) return connectionLost(peer, lostConnectionText(peer));
        SPCCL_INFO(kLogNet, "rank %d: %s %s", settings_.rank, peer.conn.name.c_str(),
                   peer.closeReason.c_str());
        return spcclSuccess;
      }
      if (!done) return spcclSuccess;
      FrameHeader header;
      std::memcpy(&header, peer.inbox, sizeof(header));
      SPCCL_CHECK(breakWith(checkFraming(header, size, peer.conn.name)));
      if (header.kind == static_cast<uint16_t>(FrameKind::Abort))
        return abortedBy(peer, peer.inbox);
      if (header.kind == static_cast<uint16_t>(FrameKind::Withdraw)) {
        SPCCL_CHECK(withdrawnBy(peer, peer.inbox));
        continue;
      }
      if (header.kind == static_cast<uint16_t>(FrameKind::Close)) {
        peer.closed = true;
        peer.closeReason = "it destroyed its communicator";
        if (!peer.recvQueue.empty())
          return breakWith(SPCCL_FAIL(spcclRemoteError,
                                      "%s destroyed its communicator while this rank still "
                                      "expected data from it",
                                      peer.conn.name.c_str()));
        return spcclSuccess;
      }
      if (header.kind != static_cast<uint16_t>(FrameKind::Data))
        return breakWith(SPCCL_FAIL(spcclRemoteError, "unexpected frame kind %u from %s",
                                    header.kind, peer.conn.name.c_str()));
      peer.headerParked = true;
    }
    if (peer.recvQueue.empty()) return spcclSuccess;
    Op& op = ops_[peer.recvQueue.front()];
    FrameHeader header;
    std::memcpy(&header, peer.inbox, sizeof(header));
    if (op.state == OpState::Queued) {
      if (spcclResult_t mismatch =
              checkExpectation(header, op.expectation, settings_.rank, peer.conn.name);
          mismatch != spcclSuccess)
        return failMismatch(peer, header, mismatch);
      if (header.length > 0) {
        spcclResult_t res = postPayload(peer, false, op.recvData, header.length);
        if (res != spcclSuccess)
          return breakWith(SPCCL_FAIL(spcclRemoteError, "receiving from %s failed: %s",
                                      peer.conn.name.c_str(), threadLastError().c_str()));
      }
      op.state = OpState::Posted;
    }
    bool done = false;
    spcclResult_t res = testPayload(peer, peer.payloadRecvRequests, &done, &peer.payloadRecvSizes);
    if (res != spcclSuccess) return connectionLost(peer, lostConnectionText(peer));
    if (!done) return spcclSuccess;
    SPCCL_CHECK(breakWith(checkPayload(peer, header, op.recvData)));
    op.state = OpState::Done;
    op.received = header.length;
    op.flags = header.flags;
    counters_.bytesReceived += header.length;
    counters_.messagesReceived += 1;
    if (flight_) flight_->noteReceived(peerIndex(peer), collectiveSeq(header), header.length);
    peer.recvQueue.pop_front();
    peer.headerParked = false;
  }
}

spcclResult_t Engine::abortedBy(Peer& peer, const unsigned char* frame) {
  FrameHeader header;
  std::memcpy(&header, frame, sizeof(header));
  std::string text(reinterpret_cast<const char*>(frame) + sizeof(FrameHeader), header.length);
  spcclResult_t code = static_cast<spcclResult_t>(header.result);
  if (code == spcclSuccess || code >= spcclNumResults) code = spcclRemoteError;
  peer.closed = true;
  return breakWith(SPCCL_FAIL(code, "%s aborted: %s", peer.conn.name.c_str(), text.c_str()));
}

spcclResult_t Engine::progressControl(Peer& peer) {
  // Tested only when poll(2) said its fd is readable (or it has none): an
  // idle control connection would otherwise cost a system call per peer in
  // every round of progress.
  if (!peer.controlMayHaveData) return spcclSuccess;
  peer.controlMayHaveData = false;
  while (!peer.controlClosed) {
    bool done = false;
    size_t size = 0;
    {
      // The control connection ends without a frame when the peer destroys
      // its communicator or dies; lane 0 tells which, in its own order. That
      // end is no failure of this rank's call: keep it out of the log and of
      // the last error.
      QuietFailures quiet;
      bool ended = peer.controlRecvRequest == nullptr &&
                   peer.conn.net->irecv(peer.conn.control.recvComm, peer.controlInbox,
                                        sizeof(peer.controlInbox), nullptr,
                                        &peer.controlRecvRequest) != spcclSuccess;
      ended = ended ||
              testRequest(&peer.controlRecvRequest, peer.conn.net, &done, &size) != spcclSuccess;
      if (ended) {
        peer.controlClosed = true;
        break;
      }
    }
    if (!done) break;
    FrameHeader header;
    std::memcpy(&header, peer.controlInbox, sizeof(header));
    SPCCL_CHECK(breakWith(checkFraming(header, size, peer.conn.name)));
    if (header.kind != static_cast<uint16_t>(FrameKind::Abort))
      return breakWith(SPCCL_FAIL(spcclRemoteError,
                                  "frame kind %u on the control connection from %s (only aborts "
                                  "travel there)",
                                  header.kind, peer.conn.name.c_str()));
    return abortedBy(peer, peer.controlInbox);
  }
  return spcclSuccess;
}

spcclResult_t Engine::progressAll() {
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer& peer = peers_[i];
    if (peer.conn.net == nullptr || broken()) continue;
    SPCCL_CHECK(progressControl(peer));
    if (broken()) continue;
    SPCCL_CHECK(progressSend(peer));
    SPCCL_CHECK(progressRecv(peer));
  }
  return spcclSuccess;
}

spcclResult_t Engine::sleepUntilProgress(int64_t maxWaitMs) {
  constexpr size_t kNoFd = SIZE_MAX;
  std::vector<size_t> controlFd(peers_.size(), kNoFd);  // index in fds
  std::vector<pollfd> fds;
  fds.reserve(peers_.size() * 2);
  bool anyWithoutFd = false;
  for (Peer& peer : peers_) {
    if (peer.conn.net == nullptr) continue;
    if (!peer.sendQueue.empty()) {
      int fd = -1;
      short events = 0;
      peer.conn.net->pollFd(peer.conn.lanes[0].sendComm, &fd, &events);
      if (fd < 0)
        anyWithoutFd = true;
      else if (events != 0)
        fds.push_back({fd, events, 0});
      pollPayloadLanes(peer, true, &fds, &anyWithoutFd);
    }
    // Watch the receive side unless a header sits parked with nothing to
    // match it: then the socket stays readable and we would spin.
    bool wantsRecv = !peer.closed && (!peer.headerParked || !peer.recvQueue.empty());
    if (wantsRecv) {
      int fd = -1;
      short events = 0;
      peer.conn.net->pollFd(peer.conn.lanes[0].recvComm, &fd, &events);
      if (fd < 0)
        anyWithoutFd = true;
      else if (events != 0)
        fds.push_back({fd, events, 0});
    }
    pollPayloadLanes(peer, false, &fds, &anyWithoutFd);
    if (!peer.controlClosed) {
      int fd = -1;
      short events = 0;
      peer.conn.net->pollFd(peer.conn.control.recvComm, &fd, &events);
      if (fd < 0) {
        anyWithoutFd = true;
        peer.controlMayHaveData = true;  // nothing to wait on: test it every time
      } else if (events != 0) {
        controlFd[&peer - peers_.data()] = fds.size();
        fds.push_back({fd, events, 0});
      }
    }
  }
  if (interruptFd_ >= 0) fds.push_back({interruptFd_, POLLIN, 0});
  int64_t waitMs = std::min(maxWaitMs, anyWithoutFd ? kNoFdPollMs : kMaxSleepMs);
  if (fds.empty() && !anyWithoutFd) waitMs = std::min<int64_t>(waitMs, kNoFdPollMs);
  int rc = ::poll(fds.data(), fds.size(), static_cast<int>(waitMs));
  if (rc < 0 && errno != EINTR)
    return SPCCL_FAIL(spcclSystemError, "poll failed: %s", strerror(errno));
  for (size_t p = 0; p < peers_.size(); ++p)
    if (controlFd[p] != kNoFd && fds[controlFd[p]].revents != 0)
      peers_[p].controlMayHaveData = true;
  return spcclSuccess;
}

void Engine::pollPayloadLanes(const Peer& peer, bool isSend, std::vector<pollfd>* fds,
                              bool* anyWithoutFd) {
  // Lane 0 is watched for its headers already. Another lane is watched only
  // while a slice is posted on it: data may wait there for a receive not yet
  // posted, and watching it then would spin.
  const std::vector<void*>& requests = isSend ? peer.payloadSendRequests : peer.payloadRecvRequests;
  for (size_t l = 1; l < requests.size(); ++l) {
    if (requests[l] == nullptr) continue;
    const Lane& lane = peer.conn.lanes[l];
    int fd = -1;
    short events = 0;
    peer.conn.net->pollFd(isSend ? lane.sendComm : lane.recvComm, &fd, &events);
    if (fd < 0)
      *anyWithoutFd = true;
    else if (events != 0)
      fds->push_back({fd, events, 0});
  }
}

spcclResult_t Engine::wait(std::span<const int> slots, std::span<size_t> received,
                           std::span<uint8_t> flags) {
  Deadline deadline(settings_.timeoutMs);
  spcclResult_t result = spcclSuccess;
  for (;;) {
    if (abortRequested_.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> lock(abortRequestMutex_);
      const spcclResult_t code = requestedCode_;
      const std::string why = requestedWhy_;
      lock.unlock();
      abort(code, why);
      break;
    }
    result = progressAll();
    if (interruptCheck_ && !broken()) {
      spcclResult_t interrupted = interruptCheck_();
      if (interrupted != spcclSuccess) breakWith(interrupted);
    }
    bool allDone = true;
    for (int slot : slots)
      if (ops_[slot].state != OpState::Done) allDone = false;
    if (allDone || broken()) break;
    if (deadline.expired()) {
      const Op* pending = nullptr;
      for (int slot : slots)
        if (ops_[slot].state != OpState::Done) {
          pending = &ops_[slot];
          break;
        }
      const char* dir = pending->isSend ? "sending to" : "receiving from";
      uint64_t seq = pending->isSend ? pending->header.seq : pending->expectation.seq;
      CollSignature sig =
          pending->isSend ? pending->header.signature() : pending->expectation.signature;
      result =
          SPCCL_FAIL(spcclTimeout, "rank %d timed out after %d ms %s %s in call #%" PRIu64 " %s",
                     settings_.rank, settings_.timeoutMs, dir,
                     peers_[pending->peer].conn.name.c_str(), seq, sig.describe().c_str());
      abort(spcclTimeout, threadLastError());
      break;
    }
    SPCCL_CHECK(sleepUntilProgress(deadline.remainingMs()));
  }
  if (broken()) {
    // Report the cause, not a later symptom of it.
    result = brokenCode_;
    setThreadLastError(brokenReason_);
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    Op& op = ops_[slots[i]];
    if (i < received.size()) received[i] = op.received;
    if (i < flags.size()) flags[i] = op.flags;
    if (op.state == OpState::Done || broken()) {
      op.inUse = false;
      freeOps_.push_back(slots[i]);
    }
  }
  return result;
}

spcclResult_t Engine::breakWith(spcclResult_t code) {
  if (code == spcclSuccess || broken()) return code;
  abort(code, threadLastError());
  return code;
}

void Engine::failPendingOps() {
  for (Peer& peer : peers_) {
    peer.sendQueue.clear();
    peer.recvQueue.clear();
  }
}

bool Engine::sendInFlight(const Peer& peer) {
  return peer.headerSendRequest != nullptr ||
         std::any_of(peer.payloadSendRequests.begin(), peer.payloadSendRequests.end(),
                     [](void* r) { return r != nullptr; });
}

void Engine::closeLanesWithUnfinishedSends() {
  // The failed call returns next, and its caller may reuse the buffers of
  // sends still in flight. A transport may read them later: shm lets the
  // receiver read this process's memory until it answers, and any
  // transport progressed again would send from them. Closing the lanes
  // withdraws those sends (a shm receiver then refuses what it read,
  // transports/shm/shm_recv.cc); the broken engine sends nothing more.
  for (Peer& peer : peers_) {
    if (peer.conn.net == nullptr) continue;
    if (!sendInFlight(peer)) continue;
    for (Lane& lane : peer.conn.lanes) {
      if (lane.sendComm != nullptr) peer.conn.net->closeSend(lane.sendComm);
      lane.sendComm = nullptr;
    }
    peer.headerSendRequest = nullptr;
    std::fill(peer.payloadSendRequests.begin(), peer.payloadSendRequests.end(), nullptr);
  }
}

void Engine::requestAbort(spcclResult_t code, const std::string& why) {
  std::lock_guard<std::mutex> lock(abortRequestMutex_);
  requestedCode_ = code;
  requestedWhy_ = why;
  abortRequested_.store(true, std::memory_order_release);
}

void Engine::setInterrupt(int fd, std::function<spcclResult_t()> check) {
  interruptFd_ = fd;
  interruptCheck_ = std::move(check);
}

void Engine::abort(spcclResult_t code, const std::string& why) {
  if (broken()) return;
  brokenCode_ = code;
  brokenReason_ = why;
  SPCCL_INFO(kLogColl, "rank %d: communicator enters the error state: %s", settings_.rank,
             why.c_str());
  {
    QuietFailures quiet;  // peers that already went away make these fail
    sendAbortFrames(code, why);
  }
  failPendingOps();
  closeLanesWithUnfinishedSends();
  if (flight_) {
    flight_->failRunning(code, why);
    if (code == spcclTimeout) flight_->dump(logFileDescriptor(), "timeout", why.c_str());
  }
}

std::vector<unsigned char> Engine::textFrame(FrameKind kind, uint64_t seq, spcclResult_t code,
                                             const std::string& why) const {
  std::string text = "rank " + std::to_string(settings_.rank) + ": " + why;
  if (text.size() > kMaxAbortText) text.resize(kMaxAbortText);
  std::vector<unsigned char> frame(sizeof(FrameHeader) + text.size());
  FrameHeader header;
  header.kind = static_cast<uint16_t>(kind);
  header.commId = settings_.commId;
  header.seq = seq;
  header.srcRank = settings_.rank;
  header.length = text.size();
  header.result = static_cast<uint32_t>(code);
  std::memcpy(frame.data(), &header, sizeof(header));
  std::memcpy(frame.data() + sizeof(header), text.data(), text.size());
  return frame;
}

void Engine::sendAbortFrames(spcclResult_t code, const std::string& why) {
  // The frame goes out behind whatever is already in flight on each
  // connection; operations not yet handed to the transport are dropped.
  broadcastControlFrame(textFrame(FrameKind::Abort, 0, code, why), /*onControl=*/true);
}

void Engine::broadcastControlFrame(const std::vector<unsigned char>& frame, bool onControl) {
  struct Pending {
    Peer* peer;
    void* request;
    bool behindData;  // on lane 0: earlier sends there must drain first
  };
  std::vector<Pending> inFlight;
  for (Peer& peer : peers_) {
    if (peer.conn.net == nullptr || peer.closed) continue;
    while (!peer.sendQueue.empty() && ops_[peer.sendQueue.back()].state == OpState::Queued)
      peer.sendQueue.pop_back();
    bool control = onControl && peer.conn.control.sendComm != nullptr;
    void* comm = control ? peer.conn.control.sendComm : peer.conn.lanes[0].sendComm;
    if (comm == nullptr) continue;  // closed by an abort
    void* request = nullptr;
    if (peer.conn.net->isend(comm, frame.data(), frame.size(), nullptr, &request) == spcclSuccess)
      inFlight.push_back({&peer, request, !control});
  }
  Deadline flush(kAbortFlushMs);
  while (!inFlight.empty() && !flush.expired()) {
    for (size_t i = 0; i < inFlight.size();) {
      Peer& peer = *inFlight[i].peer;
      bool finished = true;
      if (inFlight[i].behindData && sendInFlight(peer)) {
        bool a = false, b = false;
        if (testRequest(&peer.headerSendRequest, peer.conn.net, &a, nullptr) != spcclSuccess ||
            testPayload(peer, peer.payloadSendRequests, &b) != spcclSuccess) {
          peer.headerSendRequest = nullptr;
          std::fill(peer.payloadSendRequests.begin(), peer.payloadSendRequests.end(), nullptr);
        }
        finished = false;
      }
      if (finished) {
        int done = 0;
        size_t size = 0;
        spcclResult_t res = peer.conn.net->test(inFlight[i].request, &done, &size);
        finished = res != spcclSuccess || done;
      }
      if (finished) {
        inFlight[i] = inFlight.back();
        inFlight.pop_back();
      } else {
        ++i;
      }
    }
    if (!inFlight.empty()) ::poll(nullptr, 0, 1);
  }
}

}  // namespace spccl

// The p2p engine of one communicator: a connection pair per peer carrying
// framed messages of any size, FIFO matching per direction, progress that
// sleeps in poll(2) instead of spinning, a deadline on every wait, a
// sticky error state that peers learn about through abort frames, and
// withdrawals (a call one rank rejected fails on the others at once).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/coll_context.h"
#include "runtime/frame.h"
#include "spccl.h"
#include "spccl_net.h"

struct pollfd;

namespace spccl {

class FlightRecorder;

// One connection pair to a peer.
struct Lane {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
};

// One peer's connections (owned by the engine once handed over). Lane 0
// carries every frame header and small payloads; a payload of at least
// EngineSettings::stripeMinBytes is cut across all lanes
// (runtime/lane_split.h). Lanes are rails (devices) times connections per
// rail (core/comm.cc). The control connection carries Abort frames only, so
// that an abort is never stuck behind data the receiver has not asked for.
struct PeerConnection {
  const spcclNet_v2_t* net = nullptr;
  std::vector<Lane> lanes;
  Lane control;
  std::string name;  // "rank 3 (10.0.0.4:41234)"
};

// Closes every lane and the control connection that are open.
void closePeerConnection(PeerConnection& conn);

struct EngineSettings {
  int rank = 0;
  int nranks = 1;
  uint64_t commId = 0;
  int timeoutMs = 60000;
  size_t chunkBytes = 1 << 20;
  size_t sparsePieceBytes = 0;    // SPCCL_SPARSE_PIECE_BYTES (sparse/message_pieces.h); 0: off
  size_t compressPieceBytes = 0;  // SPCCL_COMPRESS_PIECE_BYTES (compress/chunk_pieces.h); 0: off
  size_t stagingChunkBytes = 0;   // SPCCL_STAGING_CHUNK_BYTES (coll/dense_pieces.h); 0: off
  size_t stripeMinBytes = 256 << 10;  // SPCCL_NET_STRIPE_MIN_BYTES
  bool checkRoots = true;             // SPCCL_CHECK_ROOTS (coll/root_agreement.h)
  std::string denseAlgorithm;         // SPCCL_ALGO, agreed: a dense algorithm's name, or empty
  size_t flightRecords = 0;           // SPCCL_FLIGHT_RECORDER (runtime/flight_recorder.h); 0: off
  bool wireChecksum = false;          // SPCCL_WIRE_CHECKSUM, agreed (runtime/frame_checksum.h)
};

class Engine {
 public:
  Engine(const EngineSettings& settings, std::vector<PeerConnection> peers);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return settings_.rank; }
  int nranks() const { return settings_.nranks; }
  const EngineSettings& settings() const { return settings_; }

  // Starts a collective: returns its sequence number and resets the
  // per-peer message steps. Fails at once if the engine is broken.
  spcclResult_t beginCollective(const CollSignature& signature, uint64_t* seq);

  // Posting; slots identify the operation until wait() consumes it.
  spcclResult_t postSend(int peer, const void* data, size_t bytes, const CollSignature& sig,
                         uint64_t seq, uint8_t flags, int* slot);
  spcclResult_t postRecv(int peer, void* data, size_t capacity, const CollSignature& sig,
                         uint64_t seq, int* slot);
  // Point to point outside the collective sequence (spcclSend/spcclRecv).
  spcclResult_t postUserSend(int peer, const void* data, size_t bytes, const CollSignature& sig,
                             int* slot);
  spcclResult_t postUserRecv(int peer, void* data, size_t capacity, const CollSignature& sig,
                             int* slot);

  // Waits for the operations to complete (the communicator's deadline) and
  // releases their slots. received/flags: per slot, may be empty.
  spcclResult_t wait(std::span<const int> slots, std::span<size_t> received = {},
                     std::span<uint8_t> flags = {});

  // This rank rejected the arguments of a collective call, which therefore
  // never begins: its next call, or the one `callsAhead` calls later (a
  // group's calls that have not begun). Tells every peer, on lane 0 (call
  // it between calls, with no send in flight), so that their side of that
  // call fails at once, naming this rank and `why`, instead of at the
  // deadline. A peer whose call it was breaks its communicator (the ranks
  // disagree on the call sequence from there). A peer that rejected the
  // same call ignores it, so a call that every rank rejects leaves the
  // communicator usable.
  void withdraw(spcclResult_t code, const std::string& why, uint64_t callsAhead = 0);

  // An interruption from outside the engine (a revoke heard by the
  // communicator's fault service, core/revoke.h): while waiting, the engine
  // also sleeps on `fd`, and when `check` returns a failure it breaks with
  // it (telling the peers). Set once, before the first call.
  void setInterrupt(int fd, std::function<spcclResult_t()> check);

  // Puts the engine in the error state and tells every peer (best effort).
  void abort(spcclResult_t code, const std::string& why);
  // The one call any thread may make while another is inside the engine
  // (spcclCommAbort from a watchdog): the thread in the engine's wait
  // aborts it, as abort(code, why), within one wake-up (kMaxSleepMs).
  void requestAbort(spcclResult_t code, const std::string& why);
  bool broken() const { return brokenCode_ != spcclSuccess; }

  const spcclCounters_t& counters() const { return counters_; }
  // The last calls and the peers' progress; nullptr when
  // SPCCL_FLIGHT_RECORDER=0. Dumps itself when the engine breaks with
  // spcclTimeout (its own deadline, or a peer's).
  FlightRecorder* flightRecorder() const { return flight_.get(); }
  const std::string& peerName(int peer) const { return peers_[peer].conn.name; }

  // Shared resources for algorithms.
  void* scratch(size_t bytes, int slot);
  LinkModel& linkModel() { return linkModel_; }
  const kernels::KernelTable& kernels() const;

 private:
  enum class OpState { Queued, Posted, Done };
  struct Op {
    bool inUse = false;
    bool isSend = false;
    int peer = -1;
    const void* sendData = nullptr;
    void* recvData = nullptr;
    size_t bytes = 0;              // send size, or receive capacity
    FrameHeader header;            // send: what goes out
    FrameExpectation expectation;  // recv: what must come in
    OpState state = OpState::Queued;
    spcclResult_t result = spcclSuccess;
    size_t received = 0;
    uint8_t flags = 0;
  };
  struct Peer {
    PeerConnection conn;
    std::deque<int> sendQueue;
    std::deque<int> recvQueue;
    void* headerSendRequest = nullptr;
    std::vector<void*> payloadSendRequests;  // per lane
    void* headerRecvRequest = nullptr;
    std::vector<void*> payloadRecvRequests;  // per lane
    std::vector<size_t> payloadRecvSizes;    // per lane: what its slice's message held
    bool headerParked = false;
    alignas(8) unsigned char inbox[sizeof(FrameHeader) + kMaxAbortText];
    void* controlRecvRequest = nullptr;
    bool controlClosed = false;      // the peer closed it (or there is none): stop watching
    bool controlMayHaveData = true;  // its fd was readable at the last poll(2)
    alignas(8) unsigned char controlInbox[sizeof(FrameHeader) + kMaxAbortText];
    uint32_t sendStep = 0;
    uint32_t recvStep = 0;
    uint64_t userSendSeq = 0;
    uint64_t userRecvSeq = 0;
    bool closed = false;      // no more frames will come from this peer
    std::string closeReason;  // why: it sent Close, or its connection ended
  };

  spcclResult_t allocOp(int* slot);
  int peerIndex(const Peer& peer) const;
  // The call number a frame belongs to, for the flight recorder; 0 for
  // point-to-point frames, whose numbers count per peer.
  static uint64_t collectiveSeq(const FrameHeader& header);
  spcclResult_t checkPeer(int peer, const char* what);
  spcclResult_t progressAll();
  spcclResult_t progressSend(Peer& peer);
  spcclResult_t progressRecv(Peer& peer);
  // Reads the peer's control connection: an Abort there breaks the engine.
  spcclResult_t progressControl(Peer& peer);
  spcclResult_t abortedBy(Peer& peer, const unsigned char* frame);
  // A Withdraw frame from peer: fails now when this rank began that call,
  // waits in pendingWithdrawals_ when it has not reached it yet.
  spcclResult_t withdrawnBy(Peer& peer, const unsigned char* frame);
  struct Withdrawal {
    uint64_t seq;
    std::string peerName;
    std::string text;
  };
  spcclResult_t failWithdrawn(const Withdrawal& withdrawal);
  // A received header that does not match what this rank expects: the
  // mismatch, or, when it belongs to a call this rank withdrew from and
  // the peer did not, that the peer went on with the rejected call.
  spcclResult_t failMismatch(const Peer& peer, const FrameHeader& header, spcclResult_t mismatch);
  // A send to peer failed: reports the peer's Abort cause if it sent one.
  spcclResult_t failedSendingTo(Peer& peer);
  // A connection to peer failed: breaks the engine with the peer's Abort
  // cause if one arrives soon on the control connection, else with `failure`.
  spcclResult_t connectionLost(Peer& peer, const std::string& failure);
  // "lost the connection to <peer>: <the transport's last error>"
  static std::string lostConnectionText(const Peer& peer);
  spcclResult_t testRequest(void** request, const spcclNet_v2_t* net, bool* done, size_t* size);
  // Posts a payload's slices on the peer's lanes (send or receive).
  spcclResult_t postPayload(Peer& peer, bool isSend, void* data, size_t bytes);
  // Tests every lane's payload request; *done when all finished. sizes
  // (receives): each lane's message size, recorded as it completes.
  spcclResult_t testPayload(Peer& peer, std::vector<void*>& requests, bool* done,
                            std::vector<size_t>* sizes = nullptr);
  // A received payload against its header: each lane's slice the size the
  // header announced, and with SPCCL_WIRE_CHECKSUM the checksum.
  spcclResult_t checkPayload(const Peer& peer, const FrameHeader& header, const void* data) const;
  // Adds the fds of the peer's lanes that have a payload request pending.
  void pollPayloadLanes(const Peer& peer, bool isSend, std::vector<pollfd>* fds,
                        bool* anyWithoutFd);
  spcclResult_t sleepUntilProgress(int64_t maxWaitMs);
  spcclResult_t breakWith(spcclResult_t code);
  void failPendingOps();
  // After an abort: closes the send side of every lane of a peer that
  // still has a send in flight, so no transport touches its buffer again.
  void closeLanesWithUnfinishedSends();
  // A header or payload send of this peer not yet complete.
  static bool sendInFlight(const Peer& peer);
  void sendAbortFrames(spcclResult_t code, const std::string& why);
  // An Abort or Withdraw frame: header, then "rank <me>: <why>" (truncated).
  std::vector<unsigned char> textFrame(FrameKind kind, uint64_t seq, spcclResult_t code,
                                       const std::string& why) const;
  // Sends `frame` to every live peer, on the control connections, or on
  // lane 0 behind what is in flight there; best effort.
  void broadcastControlFrame(const std::vector<unsigned char>& frame, bool onControl);

  EngineSettings settings_;
  std::vector<Peer> peers_;
  std::deque<Op> ops_;  // a deque: in-flight headers point into ops, so they must not move
  std::vector<int> freeOps_;
  uint64_t nextSeq_ = 1;
  struct WithdrawnCall {
    std::string why;          // this rank's error
    std::set<int> peersAlso;  // peers whose withdrawal from the same call came in
  };
  std::map<uint64_t, WithdrawnCall> withdrawnCalls_;  // by seq: calls this rank rejected
  std::vector<Withdrawal> pendingWithdrawals_;        // peers' withdrawals from calls not begun yet
  int interruptFd_ = -1;
  std::function<spcclResult_t()> interruptCheck_;
  spcclResult_t brokenCode_ = spcclSuccess;
  std::string brokenReason_;
  // requestAbort's request, for the thread in wait().
  std::atomic<bool> abortRequested_{false};
  std::mutex abortRequestMutex_;
  spcclResult_t requestedCode_ = spcclSuccess;
  std::string requestedWhy_;
  spcclCounters_t counters_{};
  LinkModel linkModel_;
  std::vector<std::unique_ptr<unsigned char[]>> scratch_;
  std::vector<size_t> scratchSize_;
  std::unique_ptr<FlightRecorder> flight_;
};

}  // namespace spccl

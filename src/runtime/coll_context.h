// The vocabulary every algorithm (dense, sparse, compressed, migration) is
// written in: point-to-point messages within one collective call, plus the
// kernels and the measured link model. Algorithms never touch a transport.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/kernels.h"
#include "runtime/frame.h"
#include "spccl.h"

namespace spccl {

class Engine;

// Latency (seconds) and inverse bandwidth (seconds per byte) of the links
// in use, measured at communicator creation and agreed by all ranks
// (the slowest link's values), so every rank makes the same choices.
struct LinkModel {
  double alphaSeconds = 20e-6;
  double betaSecondsPerByte = 1.0 / 1.0e9;
  bool measured = false;
};

// What one call chose, for its COLL line at INFO (runCollective): the
// algorithm, a name from a table (static storage), and why. Exists only
// while that line is on, so a call whose line is off formats nothing.
struct CallChoice {
  const char* algorithm = nullptr;
  std::string reason;
};

struct PeerRequest {
  int slot = -1;
  bool valid() const { return slot >= 0; }
};

class CollContext {
 public:
  // choice: where the call's algorithm and reason go; nullptr when its
  // COLL line is off.
  CollContext(Engine& engine, const CollSignature& signature, uint64_t seq,
              CallChoice* choice = nullptr);
  // The same call (sequence number, per-peer message order) with frames
  // that carry `signature` instead: for a step that checks a field of the
  // signature itself rather than leave it to the engine
  // (coll/root_agreement.h).
  CollContext(const CollContext& call, const CollSignature& signature);
  CollContext(const CollContext&) = delete;
  CollContext& operator=(const CollContext&) = delete;
  ~CollContext() = default;

  int rank() const;
  int nranks() const;
  const CollSignature& signature() const { return signature_; }
  uint64_t seq() const { return seq_; }

  // Posts a message to / from a peer. Between one pair of ranks, messages
  // are matched in posting order. data must stay valid until the request
  // completes. A receive accepts any message of at most capacity bytes.
  // flags travel in the frame header (e.g. a message's encoding).
  spcclResult_t isend(int peer, const void* data, size_t bytes, PeerRequest* request,
                      uint8_t flags = 0);
  spcclResult_t irecv(int peer, void* data, size_t capacity, PeerRequest* request);
  // Waits (with the communicator's deadline) for one request; for a
  // receive, *received gets the payload size and *flags the sender's flags.
  spcclResult_t wait(PeerRequest* request, size_t* received = nullptr, uint8_t* flags = nullptr);
  spcclResult_t waitAll(std::span<PeerRequest> requests);

  // Blocking conveniences.
  spcclResult_t send(int peer, const void* data, size_t bytes, uint8_t flags = 0);
  spcclResult_t recv(int peer, void* data, size_t capacity, size_t* received = nullptr,
                     uint8_t* flags = nullptr);
  // Sends to one peer while receiving from another (both may be the same).
  spcclResult_t sendRecv(int sendPeer, const void* sendData, size_t sendBytes, int recvPeer,
                         void* recvData, size_t recvCapacity, size_t* received = nullptr);

  const kernels::KernelTable& kernels() const;
  const LinkModel& linkModel() const;
  // Communicator-owned scratch memory, reused across calls; slot selects one
  // of several independent buffers. Valid until the next call with the same
  // slot and a larger size.
  void* scratch(size_t bytes, int slot = 0);
  // Slice size for pipelined algorithms (SPCCL_CHUNK_BYTES).
  size_t chunkBytes() const;
  // Piece size of the pipelined sparse schedules' messages
  // (SPCCL_SPARSE_PIECE_BYTES, sparse/message_pieces.h); 0: not cut.
  size_t sparsePieceBytes() const;
  // Input bytes a piece of the two-shot compressed schedule's owned chunk
  // (SPCCL_COMPRESS_PIECE_BYTES, compress/chunk_pieces.h); 0: not cut.
  size_t compressPieceBytes() const;
  // Whether rooted calls check that the ranks agree on the root
  // (SPCCL_CHECK_ROOTS).
  bool checksRoots() const;
  // The dense algorithm the user forced (SPCCL_ALGO, the same on every
  // rank), or empty: runDenseCollective's override.
  const std::string& denseAlgorithm() const;
  // The communicator's traffic so far (spcclCommGetCounters).
  const spcclCounters_t& counters() const;
  // A failure of this rank's own (e.g. a device copy) that cuts the call
  // short while the peers wait in it for this rank: breaks the engine
  // (Engine::abort) with `why`, which tells them now, not at their
  // deadline. Not again where the engine is broken already.
  void abortCall(spcclResult_t code, const std::string& why);

  // Whether the call's COLL line is on (SPCCL_DEBUG=INFO and
  // SPCCL_DEBUG_SUBSYS with COLL): build a reason for noteChoice only then.
  bool explainsChoice() const { return choice_ != nullptr; }
  // The algorithm this call runs (a table's name) and why, for that line;
  // the reason is dropped when it is off. A later note replaces an earlier
  // one. The flight recorder keeps the name (runtime/flight_recorder.h).
  void noteChoice(const char* algorithm, std::string_view reason = {});

 private:
  Engine& engine_;
  CollSignature signature_;
  uint64_t seq_;
  CallChoice* choice_ = nullptr;
};

// Begins a collective call with `signature` on the engine (its sequence
// number, the per-peer message order) and runs body on its context. The
// caller holds the engine (core/comm.h, runBlocking or runAsync). With
// SPCCL_DEBUG=INFO and the COLL subsystem, logs one line per call
// (runtime/call_log.h); the library's own exchanges (CollType::Internal)
// are not logged.
spcclResult_t runCollective(Engine& engine, const CollSignature& signature,
                            const std::function<spcclResult_t(CollContext&)>& body);

}  // namespace spccl

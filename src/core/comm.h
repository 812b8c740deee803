// The communicator: identity, peers and the engine that talks to them,
// plus the per-communicator last error and the queue of non-blocking
// operations (run in issue order by one worker thread).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap.h"
#include "core/handshake.h"
#include "core/staging_profile.h"
#include "device/peer_access.h"
#include "runtime/engine.h"
#include "spccl.h"

namespace spccl {
namespace transport {
class TlsContext;
}
namespace device {
class PeerAllocations;
}  // namespace device
namespace sparse {
struct CommState;
}
class FaultService;
struct CommInit;

struct CommOptions {
  int timeoutMs = 60000;
  std::string transport = "auto";
  // Where `transport` came from, for errors: "SPCCL_TRANSPORT" or
  // "spcclConfig_t.transport".
  std::string transportOrigin = "SPCCL_TRANSPORT";
  std::string socketIfname;
  bool profileLinks = true;
  std::string algorithmOverride;
  // false: creation returns spcclInProgress at once and runs on a
  // background thread (core/comm_init.h); SPCCL_COMM_BLOCKING or
  // spcclConfig_t.blocking.
  bool blocking = true;
};

// Reads the knobs, then applies the fields a (possibly older, smaller)
// config struct carries.
spcclResult_t resolveCommOptions(const spcclConfig_t* config, CommOptions* out);

// Where a failed non-blocking operation records its error as the
// communicator's last error. Shared by the communicator and its requests,
// and cut off when the communicator is destroyed, so that a request waited
// on after spcclCommAbort or spcclCommDestroy writes nothing into freed
// memory.
struct LastErrorSink {
  std::mutex mutex;
  spcclComm* comm = nullptr;  // nullptr once the communicator is gone
};

// The result of one non-blocking operation.
struct AsyncRequest {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  spcclResult_t result = spcclSuccess;
  std::string error;
};

}  // namespace spccl

struct spcclComm {
  int rank = 0;
  int nranks = 1;
  uint64_t commId = 0;
  spccl::JobSecret secret;  // keys the handshakes; never sent (core/handshake.h)
  // SPCCL_TLS on the tcp connections (core/comm_tls.h); null when off.
  std::shared_ptr<spccl::transport::TlsContext> tls;
  uint64_t splitCount = 0;
  spccl::CommOptions options;
  std::vector<spccl::RankInfo> ranks;
  std::unique_ptr<spccl::Engine> engine;
  std::string lastError = "no error";
  std::shared_ptr<spccl::LastErrorSink> errorSink;
  // The first failure of a call enqueued on a CUDA stream, found after
  // that call returned (core/staged_call.h).
  std::mutex asyncMutex;
  spcclResult_t asyncError = spcclSuccess;
  std::string asyncErrorText;
  // The CUDA device current when the communicator was created; -1: none.
  // Its PCI location and peers (self 0: unknown), asked on the creating
  // thread (a non-blocking creation runs on a thread of its own, where no
  // context is current).
  int cudaDevice = -1;
  spccl::device::DevicePeerAccess cudaDevicePeers;
  // Where staged calls on device memory spent their time
  // (SPCCL_STAGING_REPORT=1, printed at the end); shared with the stream's
  // last host function of each call, which may run after the end.
  std::shared_ptr<spccl::StagingProfile> stagingProfile = std::make_shared<spccl::StagingProfile>();
  // API calls using this communicator right now (api/api_guard.h): an
  // abort from another thread waits for them to leave before freeing it.
  std::atomic<int> callsInFlight{0};

  // A creation still running, or over, on a background thread
  // (core/comm_init.h); null for a communicator created blocking.
  std::shared_ptr<spccl::CommInit> init;
  // Set by spcclCommFinalize: every later call but the queries, Destroy and
  // Abort fails. finalizeRequest: a non-blocking communicator's flush, queued
  // behind its outstanding work; spcclCommGetAsyncError polls it.
  std::atomic<bool> finalized{false};
  spcclRequest_t finalizeRequest = nullptr;

  // The device-resident all-reduce (core/device_collective_call.h):
  // whether this communicator's all-reduces join it (-1: not decided yet,
  // decided at the first all-reduce), and the peers' buffers it opened.
  int deviceAllReduceJoins = -1;
  std::shared_ptr<spccl::device::PeerAllocations> devicePeers;
  // What sparse all-reduces keep between calls (sparse/comm_state.h),
  // created with the communicator. shared_ptr: the type stays opaque here.
  std::shared_ptr<spccl::sparse::CommState> sparse;
  // Revoke, agreement and shrink (core/fault_service.h): a listener and a
  // thread that answer whatever the engine is doing.
  std::shared_ptr<spccl::FaultService> fault;

  // Serialises use of the engine between the caller and the worker.
  std::mutex execMutex;
  // Non-blocking operations, run in order by `worker`.
  std::mutex queueMutex;
  std::condition_variable queueCv;
  std::deque<std::pair<std::function<spcclResult_t()>, spcclRequest_t>> queue;
  bool stopping = false;
  bool workerRunning = false;
  std::thread worker;
};

struct spcclRequest {
  spccl::AsyncRequest state;
  bool detached = false;  // nobody waits for it: the worker deletes it when done
  std::shared_ptr<spccl::LastErrorSink> errorSink;
};

namespace spccl {

// The first message on every lane and control connection: a frame header
// naming the sender's rank and lane, the sender's fresh nonce, and
// HMAC(secret, DataConnect | commId | src | dst | lane | acceptor's
// laneNonce | nonce | header). The acceptor's laneNonce is fresh per
// communicator and reached the sender through the authenticated
// rendezvous, so a hello recorded from another communicator never verifies,
// and the secret itself is never sent.
struct LaneHello {
  FrameHeader header;
  Nonce nonce;
  Mac mac;
};

static_assert(sizeof(LaneHello) == sizeof(FrameHeader) + kNonceBytes + kMacBytes);

// Whether `size` bytes received on an accepted connection are a LaneHello
// for a lane (or the control connection) this rank expects from that peer
// and has not accepted yet: right rank range, lane, communicator, and a MAC
// over this rank's laneNonce. The first bytes from an unauthenticated peer
// (tests/fuzz/fuzz_handshake.cc).
bool acceptsHello(const spcclComm& comm, std::vector<PeerConnection>& peers,
                  const unsigned char* buffer, size_t size);

// Creates the communicator: rendezvous, connections to every peer,
// link profiling. On failure *comm is untouched and everything is released.
// With options.blocking false, *comm is set at once and spcclInProgress
// returned; the rest runs on a background thread (core/comm_init.h).
spcclResult_t createComm(const UniqueIdContents& id, int nranks, int rank,
                         const CommOptions& options, spcclComm_t* comm);
// The two halves of createComm. newComm: the communicator's identity, no
// connections yet. setUpComm: the rendezvous, the connections, the engine;
// init (may be NULL) is the background creation that may cancel it.
std::unique_ptr<spcclComm> newComm(const UniqueIdContents& id, int nranks, int rank,
                                   const CommOptions& options);
spcclResult_t setUpComm(spcclComm* comm, const UniqueIdContents& id, CommInit* init);
void destroyComm(spcclComm_t comm, bool abort);

// Asks every thread inside comm's engine (another thread's call, the
// worker) to stop at its next wake-up with spcclRemoteError and `why`;
// nothing is freed. For an abort that must not wait for them (the NCCL
// interposer's ncclCommAbort, spcclCommAbort). comm may be NULL.
void interruptCalls(spcclComm_t comm, const std::string& why);

// The API boundary: a failed call's message becomes comm's last error
// (spcclGetLastError). comm may be NULL.
spcclResult_t finishCall(spcclComm_t comm, spcclResult_t result);

// The API boundary of a collective call that this rank rejected before it
// began (its arguments): the peers are told (Engine::withdraw, after the
// earlier non-blocking work), so that their side of the call fails at once
// instead of at the deadline; then as finishCall. comm may be NULL.
// callsAhead: calls queued before it that have not begun (a group's).
spcclResult_t rejectCall(spcclComm_t comm, spcclResult_t failure, uint64_t callsAhead = 0);

// Runs fn on the engine in issue order with earlier non-blocking work.
spcclResult_t runBlocking(spcclComm_t comm, const std::function<spcclResult_t()>& fn);
// Queues fn; the request completes when it ran. request NULL: nobody
// waits for it (a call enqueued on a stream).
spcclResult_t runAsync(spcclComm_t comm, std::function<spcclResult_t()> fn,
                       spcclRequest_t* request);

// A collective call of the API: body runs on a fresh context for
// `signature` (runtime/coll_context.h, runCollective), in issue order with
// the earlier non-blocking work; then as finishCall.
spcclResult_t runCollectiveBlocking(spcclComm_t comm, const CollSignature& signature,
                                    const std::function<spcclResult_t(CollContext&)>& body);
// The same, queued (runAsync): body is copied and runs later.
spcclResult_t runCollectiveAsync(spcclComm_t comm, const CollSignature& signature,
                                 std::function<spcclResult_t(CollContext&)> body,
                                 spcclRequest_t* request);

}  // namespace spccl

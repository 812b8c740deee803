// ucx comms. Data moves as UCP tagged messages, each comm on its own UCP
// worker (ucx_worker.h says why); a TCP side channel per connection carries
// the setup and tells when the peer is gone:
//   sender connects to the listener's socket;
//   receiver (accept) picks a tag and answers
//     [AddressHeader][its comm's UCP worker address];
//   sender creates an endpoint (UCP_ERR_HANDLING_MODE_PEER) to that address
//     and sends every message of the comm with that tag.
// The side channel stays open and silent; EOF on it means the peer closed
// or died. The UCP worker address (hundreds of bytes with several
// transports) does not fit SPCCL_NET_HANDLE_MAXSIZE, hence the exchange.
#pragma once

#include <ucp/api/ucp.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/socket.h"
#include "spccl_net.h"
#include "transports/common/side_channel.h"
#include "transports/ucx/ucx_address.h"
#include "transports/ucx/ucx_worker.h"

namespace spccl::ucx {

enum class CommKind : uint32_t { Listen, Send, Recv };

struct UcxComm;

struct UcxRequest {
  UcxComm* comm = nullptr;
  bool used = false;      // handed out and not yet released by test()
  bool ucxOwned = false;  // UCX still holds ucpRequest and will call back
  bool started = false;   // sends wait for the endpoint
  bool done = false;
  bool isSend = false;
  uint64_t order = 0;  // posting order, for starting queued sends
  void* ucpRequest = nullptr;
  ucs_status_t status = UCS_OK;
  void* data = nullptr;
  size_t size = 0;  // send size or receive capacity
  ucp_tag_recv_info_t info{};
};

struct UcxComm {
  explicit UcxComm(CommKind k) : kind(k) {}
  ~UcxComm();
  UcxComm(const UcxComm&) = delete;
  UcxComm& operator=(const UcxComm&) = delete;
  CommKind kind;
  int listenFd = -1;  // listen comms only
  std::string peerName;
  transport::SideChannel side;  // send and recv comms

  enum class Phase { Setup, Ready } phase = Phase::Setup;
  int64_t peerGoneAtMs = -1;  // side channel ended; pending requests get a grace period

  // Destroyed when the comm fails or closes: from then on UCX holds nothing
  // of it, no request, no buffer, no connection.
  CommWorker worker;
  uint64_t tag = 0;
  ucp_ep_h ep = nullptr;
  ucs_status_t epError = UCS_OK;  // set by UCX's error callback
  bool peerErrorHandling = true;  // UCP_ERR_HANDLING_MODE_PEER
  void* closeRequest = nullptr;
  int failWakeFd = -1;  // see failureWakeFd
  bool failWakeDrained = false;

  std::array<UcxRequest, SPCCL_NET_MAX_REQUESTS> slots{};
  uint64_t nextOrder = 0;

  spcclResult_t failCode = spcclSuccess;
  std::string failMessage;

  bool failed() const { return failCode != spcclSuccess; }
  // Records the first failure (already reported via SPCCL_FAIL) and ends UCX
  // work of this comm (its worker is destroyed): pending requests fail with
  // it when tested, and UCX writes into none of their buffers any more.
  spcclResult_t fail(spcclResult_t code);
  spcclResult_t report() const;

  spcclResult_t post(bool isSend, void* data, size_t size, UcxRequest** out);
  // Worker progress, setup, liveness and starting queued sends.
  void progress();
  spcclResult_t test(UcxRequest* request, int* done, size_t* size);
  // What a failed comm, whose worker is gone, gives the engine to poll:
  // readable the first time (the engine tests at once and learns the
  // failure), quiet after, as the worker's fd was; -1 if none can be made.
  int failureWakeFd();
  // Flushes what was sent (bounded, and not at all to a peer known gone),
  // then releases everything UCX holds for the comm. The comm can be freed.
  void shutdown();

 private:
  void progressSetup();
  void notePeerGone();
  void createEndpoint(const AddressHeader& header, const unsigned char* address);
  void startQueuedSends();
  void startSend(UcxRequest* request);
  void startRecv(UcxRequest* request);
  void cancelOutstanding();
  void releaseWorker();
  void waitForUcx();
};

// Listener side: a fresh recv comm on an accepted socket, its answer queued.
UcxComm* acceptedComm(int fd, const net::SockAddr& peer);
// Sender side: a send comm connecting to addr.
UcxComm* connectingComm(const net::SockAddr& addr);

}  // namespace spccl::ucx

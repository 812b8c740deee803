#include "transports/ucx/ucx_comm.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "transports/ucx/ucx_worker.h"

namespace spccl::ucx {
namespace {

// After the side channel ends, requests still pending get this long for
// messages already on their way (the data travels on UCX's own connections,
// which the side channel's EOF may overtake) before they fail.
constexpr int64_t kPeerGoneGraceMs = 200;
// Closing a comm whose peer is alive waits at most this long for its sends
// (the peer must read them); the worker is destroyed after it either way.
constexpr int64_t kCloseFlushMs = 2000;
// Once the sends are done, the endpoint's flush gets this long more. It can
// wait on the peer (an endpoint whose wire-up the peer has not answered
// yet), and a peer busy elsewhere (in an agreement, say) made it take the
// whole 2 s on every connection; what it still guards is at most UCX's
// last transmit segment, behind a kernel buffer the peer has not read.
constexpr int64_t kCloseAfterSendsMs = 100;

void complete(UcxRequest* r, ucs_status_t status) {
  ++process()->completions;
  r->ucxOwned = false;
  r->ucpRequest = nullptr;
  r->done = true;
  r->status = status;
}

void sendDone(void* request, ucs_status_t status, void* user) {
  complete(static_cast<UcxRequest*>(user), status);
  ucp_request_free(request);
}

void recvDone(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* r = static_cast<UcxRequest*>(user);
  if (info != nullptr) r->info = *info;
  complete(r, status);
  ucp_request_free(request);
}

// Called inside ucp_worker_progress: only notes the error; progress() fails
// the comm outside UCX's callback.
void endpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* comm = static_cast<UcxComm*>(arg);
  if (comm->epError == UCS_OK) comm->epError = status;
}

// The outcome of a *_nbx call: done now, failed now, or UCX owns it.
void adopt(UcxRequest* r, ucs_status_ptr_t ptr) {
  r->started = true;
  if (ptr == nullptr) {
    complete(r, UCS_OK);
  } else if (UCS_PTR_IS_ERR(ptr)) {
    complete(r, UCS_PTR_STATUS(ptr));
  } else if (!r->done) {  // the callback may already have run inside the call
    r->ucxOwned = true;
    r->ucpRequest = ptr;
  }
}

}  // namespace

UcxComm::~UcxComm() {
  if (failWakeFd >= 0) ::close(failWakeFd);
}

int UcxComm::failureWakeFd() {
  if (failWakeFd < 0) {
    failWakeFd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  } else if (!failWakeDrained) {
    uint64_t value = 0;
    const ssize_t got = ::read(failWakeFd, &value, sizeof(value));  // quiet from now on
    (void)got;
    failWakeDrained = true;
  }
  return failWakeFd;
}

spcclResult_t UcxComm::fail(spcclResult_t code) {
  if (failed()) return failCode;
  ++process()->completions;
  failCode = code;
  failMessage = threadLastError();
  cancelOutstanding();
  releaseWorker();
  return failCode;
}

spcclResult_t UcxComm::report() const { return SPCCL_FAIL(failCode, "%s", failMessage.c_str()); }

spcclResult_t UcxComm::post(bool isSend, void* data, size_t size, UcxRequest** out) {
  const char* op = isSend ? "ucx isend" : "ucx irecv";
  if (failed()) return report();
  UcxRequest* slot = nullptr;
  for (UcxRequest& r : slots)
    if (!r.used && !r.ucxOwned) {
      slot = &r;
      break;
    }
  if (slot == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "%s to %s: more than %d requests outstanding", op,
                      peerName.c_str(), SPCCL_NET_MAX_REQUESTS);
  *slot = UcxRequest{};
  slot->comm = this;
  slot->used = true;
  slot->isSend = isSend;
  slot->order = nextOrder++;
  slot->data = data;
  slot->size = size;
  if (!isSend)
    startRecv(slot);
  else if (ep != nullptr)
    startQueuedSends();  // this one and any queued before it, in order
  *out = slot;
  return spcclSuccess;
}

void UcxComm::startSend(UcxRequest* r) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = sendDone;
  param.user_data = r;
  adopt(r, ucp_tag_send_nbx(ep, r->data, r->size, tag, &param));
}

void UcxComm::startRecv(UcxRequest* r) {
  ucp_request_param_t param{};
  // UCX 1.13 leaves recv_info.tag_info unset when a receive completes
  // immediately (an eager message already there), so the length always
  // comes through the callback.
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = recvDone;
  param.user_data = r;
  adopt(r, ucp_tag_recv_nbx(worker.handle(), r->data, r->size, tag, ~uint64_t{0}, &param));
}

void UcxComm::startQueuedSends() {
  for (;;) {
    UcxRequest* oldest = nullptr;
    for (UcxRequest& r : slots)
      if (r.used && r.isSend && !r.started && (oldest == nullptr || r.order < oldest->order))
        oldest = &r;
    if (oldest == nullptr) return;
    startSend(oldest);
  }
}

void UcxComm::cancelOutstanding() {
  if (!worker.alive()) return;
  for (UcxRequest& r : slots)
    if (r.ucxOwned && !r.isSend) ucp_request_cancel(worker.handle(), r.ucpRequest);
  if (ep != nullptr) {
    // Outstanding sends complete with UCS_ERR_CANCELED. (Without peer
    // failure handling UCX allows no forced close: flush instead.)
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = peerErrorHandling ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t ptr = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(ptr)) closeRequest = ptr;
    ep = nullptr;
  }
}

// What UCX still holds of this comm goes with the worker: a receive that
// ucp_request_cancel could not take back (matched to a message that will
// never be whole) included. No callback follows.
void UcxComm::releaseWorker() {
  if (closeRequest != nullptr) {
    ucp_request_free(closeRequest);  // released by UCX on completion, or with the worker
    closeRequest = nullptr;
  }
  ep = nullptr;  // closed above, or destroyed with the worker
  worker.destroy();
  for (UcxRequest& r : slots) {
    if (!r.ucxOwned) continue;
    r.ucxOwned = false;
    r.ucpRequest = nullptr;
    if (!r.done) {
      r.done = true;
      r.status = UCS_ERR_CANCELED;
    }
  }
}

void UcxComm::progress() {
  if (failed()) return;
  if (epError != UCS_OK) {
    fail(SPCCL_FAIL(spcclRemoteError, "ucx: endpoint to %s failed: %s (peer gone?)",
                    peerName.c_str(), ucs_status_string(epError)));
    return;
  }
  if (phase == Phase::Setup) progressSetup();
  if (failed()) return;
  notePeerGone();
  if (peerGoneAtMs >= 0 && monotonicMs() - peerGoneAtMs > kPeerGoneGraceMs) {
    bool pending = false;
    for (UcxRequest& r : slots) pending = pending || (r.used && !r.done);
    if (pending)
      fail(SPCCL_FAIL(spcclRemoteError,
                      "ucx: %s closed its connection with requests pending (process died?)",
                      peerName.c_str()));
  }
}

void UcxComm::notePeerGone() {
  // The sender reads the receiver's answer on the side channel; only the
  // receiver's side is silent from the start.
  bool silent = phase == Phase::Ready || kind == CommKind::Recv;
  if (silent && peerGoneAtMs < 0 && side.peerGone()) {
    peerGoneAtMs = monotonicMs();
    SPCCL_INFO(kLogNet, "ucx: %s closed its side channel", peerName.c_str());
  }
}

void UcxComm::progressSetup() {
  transport::SideChannel::Status status;
  spcclResult_t res = side.progress(&status);
  if (res != spcclSuccess) {
    fail(res);
    return;
  }
  if (status != transport::SideChannel::Status::Done) return;
  if (kind == CommKind::Recv) {  // our tag and address are out
    phase = Phase::Ready;
    return;
  }
  AddressHeader header;
  const size_t total = addressAnswerBytes(side.received().data(), &header);
  if (total == 0) {
    fail(SPCCL_FAIL(spcclRemoteError,
                    "ucx: %s answered with something that is not a spccl ucx address",
                    peerName.c_str()));
    return;
  }
  if (side.received().size() < total) {  // the header is in; now the address
    side.expectTotal(total);
    progressSetup();
    return;
  }
  createEndpoint(header, side.received().data() + sizeof(header));
}

// UCX 1.13's shared-memory transports (posix, sysv, cma) have no peer
// failure handling, so an endpoint that asks for it is unreachable over
// them. The first time that happens the process falls back to endpoints
// without it; the side channel still fails requests when a peer dies.
static bool gPeerErrorHandling = true;

void UcxComm::createEndpoint(const AddressHeader& header, const unsigned char* address) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address);
  params.err_handler.cb = endpointError;
  params.err_handler.arg = this;
  params.err_mode = gPeerErrorHandling ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  ucs_status_t status = ucp_ep_create(worker.handle(), &params, &ep);
  if (status == UCS_ERR_UNREACHABLE && gPeerErrorHandling) {
    gPeerErrorHandling = false;
    SPCCL_INFO(kLogNet,
               "ucx: no transport in UCX_TLS reaches %s with peer failure handling "
               "(UCX's shared-memory transports have none); using endpoints without it, dead "
               "peers are detected through the side channel",
               peerName.c_str());
    params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    status = ucp_ep_create(worker.handle(), &params, &ep);
  }
  peerErrorHandling = params.err_mode == UCP_ERR_HANDLING_MODE_PEER;
  if (status != UCS_OK) {
    ep = nullptr;
    fail(SPCCL_FAIL(spcclRemoteError, "ucx: creating an endpoint to %s: %s", peerName.c_str(),
                    ucs_status_string(status)));
    return;
  }
  tag = header.tag;
  phase = Phase::Ready;
  startQueuedSends();
}

spcclResult_t UcxComm::test(UcxRequest* r, int* done, size_t* size) {
  progress();
  *done = 0;
  if (r->done) {
    r->used = false;
    if (r->status == UCS_OK) {
      *done = 1;
      if (size != nullptr) *size = r->isSend ? r->size : r->info.length;
      return spcclSuccess;
    }
    if (failed()) return report();
    if (r->status == UCS_ERR_MESSAGE_TRUNCATED)
      return fail(SPCCL_FAIL(spcclRemoteError,
                             "ucx: a message from %s is larger than the %zu bytes posted "
                             "(oversize)",
                             peerName.c_str(), r->size));
    return fail(SPCCL_FAIL(spcclRemoteError, "ucx: %s %s failed: %s",
                           r->isSend ? "sending to" : "receiving from", peerName.c_str(),
                           ucs_status_string(r->status)));
  }
  if (failed()) {
    r->used = false;  // UCX let go of it with the worker
    return report();
  }
  return spcclSuccess;
}

void UcxComm::shutdown() {
  removeComm(this);
  if (worker.alive()) {
    notePeerGone();
    // A peer known gone reads nothing more: no flush, and no wait for UCX.
    const bool peerAlive = !failed() && peerGoneAtMs < 0;
    if (ep != nullptr && peerAlive) {
      ucp_request_param_t param{};  // flush: what was sent reaches the peer first
      ucs_status_ptr_t ptr = ucp_ep_close_nbx(ep, &param);
      if (UCS_PTR_IS_PTR(ptr)) closeRequest = ptr;
      ep = nullptr;
    }
    cancelOutstanding();
    if (peerAlive) waitForUcx();
    releaseWorker();
  }
  side.close();
}

// Until UCX holds no send of this comm and the flush is done, or the
// deadlines above. Receives are not waited for: a closed comm wants no more
// data, and one matched to a message that stopped half-way would never
// complete.
void UcxComm::waitForUcx() {
  Deadline sendsDeadline(kCloseFlushMs);
  int64_t sendsDoneAtMs = -1;
  for (;;) {
    worker.progress();
    // The other comms' workers too, as the engine is not calling: a peer
    // flushing to one of them waits for us, maybe while we wait for it.
    for (void* other : process()->comms) static_cast<UcxComm*>(other)->worker.progress();
    if (closeRequest != nullptr && ucp_request_check_status(closeRequest) != UCS_INPROGRESS) {
      ucp_request_free(closeRequest);
      closeRequest = nullptr;
    }
    int sends = 0;
    for (UcxRequest& r : slots) sends += r.ucxOwned && r.isSend;
    if (sends == 0 && closeRequest == nullptr) return;
    if (sends == 0 && sendsDoneAtMs < 0) sendsDoneAtMs = monotonicMs();
    const bool expired =
        sends > 0 ? sendsDeadline.expired() : monotonicMs() - sendsDoneAtMs > kCloseAfterSendsMs;
    if (expired) {
      SPCCL_INFO(kLogNet,
                 "ucx: closing the connection to %s: %d send(s) not done after %lld ms, or the "
                 "flush after %lld ms more; they go with the worker",
                 peerName.c_str(), sends, static_cast<long long>(kCloseFlushMs),
                 static_cast<long long>(kCloseAfterSendsMs));
      return;
    }
    pollfd p{worker.wakeupFd(), POLLIN, 0};
    worker.arm(process()->completions);
    ::poll(&p, 1, 10);
  }
}

UcxComm* acceptedComm(int fd, const net::SockAddr& peer) {
  Process* p = process();
  auto* comm = new UcxComm(CommKind::Recv);
  comm->side.adopt(fd, peer, monotonicMs() + p->timeoutMs);
  comm->peerName = comm->side.peerName();
  addComm(comm);
  spcclResult_t res = comm->worker.create();
  if (res != spcclSuccess) {
    comm->fail(res);  // reported by test
    return comm;
  }
  comm->tag = ++p->lastTag;
  const CommWorker& w = comm->worker;
  AddressHeader header{kAddressMagic, static_cast<uint32_t>(w.addressLength()), comm->tag};
  comm->side.queueSend(&header, sizeof(header));
  comm->side.queueSend(w.address(), w.addressLength());
  comm->progress();
  return comm;
}

UcxComm* connectingComm(const net::SockAddr& addr) {
  auto* comm = new UcxComm(CommKind::Send);
  addComm(comm);
  spcclResult_t res = comm->side.connect(addr, monotonicMs() + process()->timeoutMs);
  comm->peerName = comm->side.peerName();
  comm->side.expectTotal(sizeof(AddressHeader));
  if (res == spcclSuccess) res = comm->worker.create();
  if (res != spcclSuccess) comm->fail(res);
  return comm;
}

}  // namespace spccl::ucx

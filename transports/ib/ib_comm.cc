#include "transports/ib/ib_comm.h"

#include <arpa/inet.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"

namespace spccl::ib {

namespace {

constexpr int64_t kPeerGoneGraceMs = 200;
constexpr int kCqDepth = 4 * SPCCL_NET_MAX_REQUESTS;

// wr_id: kind in the high half, slot in the low half.
enum WorkKind : uint64_t { kCtsRecv = 1, kImmRecv = 2, kCtsSend = 3, kDataWrite = 4 };
uint64_t workId(WorkKind kind, uint32_t slot) { return (uint64_t{kind} << 32) | slot; }

}  // namespace

IbComm::~IbComm() {
  if (qp) ibv_destroy_qp(qp);
  if (cq) ibv_destroy_cq(cq);
  if (channel) ibv_destroy_comp_channel(channel);
  if (ctsMr) ibv_dereg_mr(ctsMr);
  for (IbRequest& r : slots) releaseBuffer(&r);
}

spcclResult_t IbComm::fail(spcclResult_t code) {
  if (!failed()) {
    failCode = code;
    failMessage = threadLastError();
  }
  return failCode;
}

spcclResult_t IbComm::report() const { return SPCCL_FAIL(failCode, "%s", failMessage.c_str()); }

spcclResult_t IbComm::create() {
  channel = ibv_create_comp_channel(device->hca->context);
  if (channel == nullptr) return SPCCL_FAIL(spcclSystemError, "ib: ibv_create_comp_channel failed");
  fcntl(channel->fd, F_SETFL, fcntl(channel->fd, F_GETFL) | O_NONBLOCK);
  cq = ibv_create_cq(device->hca->context, kCqDepth, nullptr, channel, 0);
  if (cq == nullptr) return SPCCL_FAIL(spcclSystemError, "ib: ibv_create_cq failed");
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 2 * SPCCL_NET_MAX_REQUESTS;
  init.cap.max_recv_wr = SPCCL_NET_MAX_REQUESTS;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = static_cast<uint32_t>(device->maxInline);
  qp = ibv_create_qp(device->hca->pd, &init);
  if (qp == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib: ibv_create_qp on %s failed: %s",
                      portName(device->port).c_str(), strerror(errno));
  RtsAttributes initAttr = initAttributes(static_cast<uint8_t>(device->port.port));
  if (ibv_modify_qp(qp, &initAttr.attr, initAttr.mask) != 0)
    return SPCCL_FAIL(spcclSystemError, "ib: QP to INIT failed: %s", strerror(errno));
  if (kind == CommKind::Send) {
    ctsMr = ibv_reg_mr(device->hca->pd, ctsInbox.data(), sizeof(ctsInbox), IBV_ACCESS_LOCAL_WRITE);
    if (ctsMr == nullptr)
      return SPCCL_FAIL(spcclSystemError, "ib: registering the Cts inbox failed");
  }
  for (uint32_t i = 0; i < SPCCL_NET_MAX_REQUESTS; ++i) SPCCL_CHECK(postReceiveSlot(i));
  local.qpn = qp->qp_num;
  local.psn = std::random_device{}() & 0xffffff;
  local.lid = device->port.lid;
  local.port = static_cast<uint8_t>(device->port.port);
  local.linkLayer = static_cast<uint8_t>(device->port.linkLayer);
  local.mtu = static_cast<uint8_t>(device->port.mtu);
  local.gidIndex = static_cast<uint8_t>(device->port.gidIndex);
  std::memcpy(local.gid, device->port.gid.raw, sizeof(local.gid));
  side.queueSend(&local, sizeof(local));
  side.expectTotal(sizeof(QpInfo));
  return spcclSuccess;
}

spcclResult_t IbComm::postReceiveSlot(uint32_t slot) {
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  ibv_sge sge{};
  if (kind == CommKind::Send) {  // a Cts lands here
    sge.addr = reinterpret_cast<uintptr_t>(&ctsInbox[slot]);
    sge.length = sizeof(Cts);
    sge.lkey = ctsMr->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr_id = workId(kCtsRecv, slot);
  } else {  // consumed by a write-with-immediate; the data goes where the Cts said
    wr.wr_id = workId(kImmRecv, slot);
  }
  if (ibv_post_recv(qp, &wr, &bad) != 0)
    return SPCCL_FAIL(spcclSystemError, "ib: ibv_post_recv to %s failed: %s", peerName.c_str(),
                      strerror(errno));
  return spcclSuccess;
}

void IbComm::finishSetup() {
  QpInfo remote;
  std::memcpy(&remote, side.received().data(), sizeof(remote));
  if (const char* why = checkQpInfo(remote, local)) {
    fail(SPCCL_FAIL(spcclRemoteError, "ib: connection from %s refused: %s", peerName.c_str(), why));
    return;
  }
  RtrAttributes rtr = rtrAttributes(local, remote);
  if (ibv_modify_qp(qp, &rtr.attr, rtr.mask) != 0) {
    fail(SPCCL_FAIL(spcclSystemError, "ib: QP to RTR (peer %s, qpn %u) failed: %s",
                    peerName.c_str(), remote.qpn, strerror(errno)));
    return;
  }
  RtsAttributes rts = rtsAttributes(local);
  if (ibv_modify_qp(qp, &rts.attr, rts.mask) != 0) {
    fail(SPCCL_FAIL(spcclSystemError, "ib: QP to RTS failed: %s", strerror(errno)));
    return;
  }
  ready = true;
}

spcclResult_t IbComm::post(bool isSend, void* data, size_t size, Registration* registration,
                           IbRequest** out) {
  if (failed()) return report();
  if (registration != nullptr && size > 0 && !covers(*registration, data, size))
    return SPCCL_FAIL(spcclInvalidArgument,
                      "ib %s to %s: the mhandle registers %zu bytes at %p, "
                      "which do not hold the %zu bytes at %p",
                      isSend ? "isend" : "irecv", peerName.c_str(), registration->length,
                      // NOLINTNEXTLINE(performance-no-int-to-ptr): the registration's bounds
                      reinterpret_cast<void*>(registration->base), size, data);
  if (size > kMaxMessageBytes)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "ib: a message of %zu bytes to %s is over the %zu-byte "
                      "limit of one RDMA write with immediate",
                      size, peerName.c_str(), kMaxMessageBytes);
  IbRequest* slot = nullptr;
  for (IbRequest& r : slots)
    if (!r.used) {
      slot = &r;
      break;
    }
  if (slot == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "ib: more than %d requests outstanding on %s",
                      SPCCL_NET_MAX_REQUESTS, peerName.c_str());
  *slot = IbRequest{};
  slot->comm = this;
  slot->used = true;
  slot->isSend = isSend;
  slot->order = nextOrder++;
  slot->data = data;
  slot->size = size;
  slot->registration = registration;
  *out = slot;
  progress();
  return spcclSuccess;
}

IbRequest* IbComm::oldestUnfinished(bool started) {
  IbRequest* oldest = nullptr;
  for (IbRequest& r : slots)
    if (r.used && !r.done && r.started == started && (!oldest || r.order < oldest->order))
      oldest = &r;
  return oldest;
}

spcclResult_t IbComm::registerBuffer(IbRequest* r) {
  if (r->registration != nullptr) return spcclSuccess;
  SPCCL_CHECK(cache->acquire(r->data, r->size, &r->registration));
  r->cacheReference = true;
  return spcclSuccess;
}

void IbComm::releaseBuffer(IbRequest* r) {
  if (r->cacheReference) cache->release(r->registration);
  r->registration = nullptr;
  r->cacheReference = false;
}

spcclResult_t IbComm::sendCts(IbRequest* r) {
  SPCCL_CHECK(registerBuffer(r));
  Cts cts;
  cts.addr = reinterpret_cast<uintptr_t>(r->data);
  cts.capacity = r->size;
  cts.rkey = r->registration->rkey;
  cts.seq = nextSeq++;
  ibv_sge sge{reinterpret_cast<uintptr_t>(&cts), sizeof(cts), 0};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = workId(kCtsSend, static_cast<uint32_t>(r - slots.data()));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;  // inline: cts may go out of scope
  if (ibv_post_send(qp, &wr, &bad) != 0)
    return SPCCL_FAIL(spcclRemoteError, "ib: sending a clear-to-send to %s failed: %s",
                      peerName.c_str(), strerror(errno));
  r->started = true;
  return spcclSuccess;
}

spcclResult_t IbComm::writeMessage(IbRequest* r, const Cts& cts) {
  bool oversize = r->size > cts.capacity;
  ibv_sge sge{};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = workId(kDataWrite, static_cast<uint32_t>(r - slots.data()));
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = cts.addr;
  wr.wr.rdma.rkey = cts.rkey;
  wr.imm_data = htonl(oversize ? kOversizeImm : static_cast<uint32_t>(r->size));
  if (!oversize && r->size > 0) {
    SPCCL_CHECK(registerBuffer(r));
    sge.addr = reinterpret_cast<uintptr_t>(r->data);
    sge.length = static_cast<uint32_t>(r->size);
    sge.lkey = r->registration->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
  }
  if (ibv_post_send(qp, &wr, &bad) != 0)
    return SPCCL_FAIL(spcclRemoteError, "ib: RDMA write to %s failed: %s", peerName.c_str(),
                      strerror(errno));
  r->started = true;
  if (oversize)
    return SPCCL_FAIL(spcclRemoteError,
                      "ib: a message of %zu bytes to %s is larger than the "
                      "%llu bytes it posted (oversize)",
                      r->size, peerName.c_str(), static_cast<unsigned long long>(cts.capacity));
  return spcclSuccess;
}

void IbComm::startPending() {
  for (IbRequest* r; (r = oldestUnfinished(false)) != nullptr;) {
    spcclResult_t res = spcclSuccess;
    if (r->isSend) {
      if (ctsArrived.empty()) return;
      Cts cts = ctsArrived.front();
      ctsArrived.pop_front();
      res = writeMessage(r, cts);
    } else {
      res = sendCts(r);
    }
    if (res != spcclSuccess) {
      fail(res);
      return;
    }
  }
}

void IbComm::pollCompletions() {
  ibv_cq* eventCq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(channel, &eventCq, &context) == 0) ibv_ack_cq_events(eventCq, 1);
  ibv_wc wcs[16];
  for (;;) {
    int n = ibv_poll_cq(cq, 16, wcs);
    if (n <= 0) return;
    completions += static_cast<uint64_t>(n);
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      auto kind = static_cast<WorkKind>(wc.wr_id >> 32);
      auto slot = static_cast<uint32_t>(wc.wr_id & 0xffffffffu);
      if (wc.status != IBV_WC_SUCCESS) {
        fail(SPCCL_FAIL(spcclRemoteError, "ib: work completion from %s failed: %s (peer gone?)",
                        peerName.c_str(), ibv_wc_status_str(wc.status)));
        continue;
      }
      if (kind == kCtsRecv) {
        ctsArrived.push_back(ctsInbox[slot]);
        if (postReceiveSlot(slot) != spcclSuccess) fail(spcclSystemError);
      } else if (kind == kImmRecv) {
        uint32_t size = ntohl(wc.imm_data);
        IbRequest* r = oldestUnfinished(true);
        if (postReceiveSlot(slot) != spcclSuccess) fail(spcclSystemError);
        if (r == nullptr) {
          fail(SPCCL_FAIL(spcclRemoteError, "ib: %s wrote a message nobody asked for",
                          peerName.c_str()));
        } else if (size == kOversizeImm) {
          fail(SPCCL_FAIL(spcclRemoteError,
                          "ib: a message from %s is larger than the %zu bytes "
                          "posted (oversize)",
                          peerName.c_str(), r->size));
        } else {
          r->result = size;
          r->done = true;
        }
      } else if (kind == kDataWrite) {
        IbRequest& r = slots[slot];
        r.result = r.size;
        r.done = true;
      }
    }
  }
}

void IbComm::progress() {
  if (failed()) return;
  if (!ready) {
    transport::SideChannel::Status status;
    spcclResult_t res = side.progress(&status);
    if (res != spcclSuccess) {
      fail(res);
      return;
    }
    if (status != transport::SideChannel::Status::Done) return;
    finishSetup();
    if (failed()) return;
  }
  pollCompletions();
  if (!failed()) startPending();
  if (peerGoneAtMs < 0 && side.peerGone()) peerGoneAtMs = monotonicMs();
  if (peerGoneAtMs >= 0 && monotonicMs() - peerGoneAtMs > kPeerGoneGraceMs &&
      oldestUnfinished(true) != nullptr)
    fail(SPCCL_FAIL(spcclRemoteError,
                    "ib: %s closed its connection with requests pending "
                    "(process died?)",
                    peerName.c_str()));
}

spcclResult_t IbComm::test(IbRequest* r, int* done, size_t* size) {
  *done = 0;
  if (!r->done) progress();
  if (r->done) {
    *done = 1;
    if (size) *size = r->result;
    releaseBuffer(r);
    r->used = false;
    return spcclSuccess;
  }
  if (failed()) {
    releaseBuffer(r);
    r->used = false;
    return report();
  }
  return spcclSuccess;
}

bool IbComm::armForSleep() {
  if (!ready || failed()) return true;
  ibv_req_notify_cq(cq, 0);
  // A completion that landed before the arming raises no event: look once more.
  uint64_t before = completions;
  pollCompletions();
  startPending();
  return completions == before;
}

}  // namespace spccl::ib

#include "core/fault_service.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "base/knobs.h"
#include "base/log.h"

namespace spccl {

namespace {

// A connection gets this long to deliver its message: the sender has it
// ready, so only a stalled or hostile sender takes it, and then it delays
// the other messages by this much at most.
constexpr int64_t kMessageReadMs = 1000;
// A relayed revoke waits at most this long for a rank to take it.
constexpr int64_t kRelayMs = 1000;

}  // namespace

FaultService::~FaultService() {
  stopping_ = true;
  if (wakeFds_[1] >= 0) {
    char byte = 1;
    (void)!::write(wakeFds_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  if (relay_.joinable()) relay_.join();
  for (int fd : {listenFd_, wakeFds_[0], wakeFds_[1], revokedFd_})
    if (fd >= 0) ::close(fd);
}

spcclResult_t FaultService::listen(net::SockAddr* advertised) {
  int family = net::parseSocketFamily(knobString("SPCCL_SOCKET_FAMILY"));
  net::Interface iface;
  SPCCL_CHECK(net::pickInterface(knobString("SPCCL_SOCKET_IFNAME"), family < 0 ? AF_UNSPEC : family,
                                 &iface));
  SPCCL_CHECK(net::listenOn(iface.addr, 128, &listenFd_, advertised));
  SPCCL_CHECK(net::setNonBlocking(listenFd_, true));
  if (::pipe2(wakeFds_, O_CLOEXEC | O_NONBLOCK) != 0)
    return SPCCL_FAIL(spcclSystemError, "pipe2 for the fault service: %s", strerror(errno));
  revokedFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (revokedFd_ < 0)
    return SPCCL_FAIL(spcclSystemError, "eventfd for the fault service: %s", strerror(errno));
  return spcclSuccess;
}

void FaultService::start(const FaultChannelKeys& keys, std::vector<net::SockAddr> peers,
                         int timeoutMs) {
  keys_ = keys;
  peers_ = std::move(peers);
  timeoutMs_ = timeoutMs;
  knownFailed.assign(peers_.size(), 0);
  thread_ = std::thread([this] { serve(); });
}

std::string FaultService::peerName(int rank) const {
  return "rank " + std::to_string(rank) + " (fault service " + net::toString(peers_[rank]) + ")";
}

spcclResult_t FaultService::send(int rank, FaultMessage message, const Deadline& deadline,
                                 FaultMessage* reply) const {
  message.header.dst = rank;
  return sendFaultMessage(keys_, peers_[rank], peerName(rank), std::move(message), deadline, reply);
}

std::string FaultService::revokedReason() const {
  std::lock_guard<std::mutex> lock(revokeMutex_);
  return revokedReason_;
}

bool FaultService::markRevoked(const std::string& why) {
  std::lock_guard<std::mutex> lock(revokeMutex_);
  if (revoked_.load()) return false;
  revokedReason_ = why;
  revoked_ = true;
  uint64_t one = 1;
  (void)!::write(revokedFd_, &one, sizeof(one));
  return true;
}

void FaultService::relayRevoke(int skip) {
  if (relay_.joinable()) return;  // a revoke is relayed once
  relay_ = std::thread([this, skip] {
    // A revoke is relayed by every rank that hears of it, as ULFM's, so
    // that a revoker that dies half-way through still reaches every rank.
    QuietFailures quiet;  // dead ranks refuse; that is expected here
    for (int r = 0; r < nranks() && !stopping_; ++r) {
      if (r == keys_.rank || r == skip) continue;
      FaultMessage message;
      message.header.kind = static_cast<uint16_t>(FaultKind::Revoke);
      (void)send(r, std::move(message), Deadline(std::min<int64_t>(kRelayMs, timeoutMs_)), nullptr);
    }
  });
}

FaultMessage FaultService::answer(const FaultMessage& request) {
  const FaultHeader& h = request.header;
  AgreementRecord& record = agreements[h.instance];
  if (record.failed.size() != peers_.size()) record.failed.resize(peers_.size(), 0);
  FaultMessage reply;
  reply.header.kind = static_cast<uint16_t>(FaultKind::Reply);
  reply.header.dst = h.src;
  reply.header.instance = h.instance;
  reply.header.replyTo = h.nonce;
  if (h.kind == static_cast<uint16_t>(FaultKind::Accept) && h.ballot >= record.promised &&
      record.stage != AgreeStage::Decided && request.payload.size() == peers_.size()) {
    record.promised = h.ballot;
    record.stage = AgreeStage::Accepted;
    record.ballot = h.ballot;
    record.flag = h.flag;
    record.failed = request.payload;
  } else if (h.kind == static_cast<uint16_t>(FaultKind::Query)) {
    record.promised = std::max(record.promised, h.ballot);
  }
  reply.header.stage = static_cast<uint32_t>(record.stage);
  reply.header.promised = record.promised;
  reply.header.ballot = record.ballot;
  reply.header.flag = record.flag;
  reply.payload = record.failed;
  return reply;
}

void FaultService::handle(int fd) {
  QuietFailures quiet;  // a bad message is dropped, logged at INFO
  FaultMessage message;
  Deadline deadline(kMessageReadMs);
  if (net::setNonBlocking(fd, false) != spcclSuccess ||
      receiveFaultMessage(keys_, fd, deadline, &message) != spcclSuccess) {
    SPCCL_INFO(kLogInit, "rank %d: fault service: %s", keys_.rank, threadLastError().c_str());
    return;
  }
  const FaultHeader& h = message.header;
  switch (static_cast<FaultKind>(h.kind)) {
    case FaultKind::Revoke:
      if (markRevoked("rank " + std::to_string(h.src) + " revoked the communicator")) {
        SPCCL_INFO(kLogInit, "rank %d: rank %d revoked the communicator", keys_.rank, h.src);
        relayRevoke(h.src);
      }
      break;
    case FaultKind::Query:
    case FaultKind::Accept: {
      FaultMessage reply;
      {
        std::lock_guard<std::mutex> lock(mutex);
        reply = answer(message);
      }
      if (sealFaultMessage(keys_, &reply) == spcclSuccess) {
        (void)!net::sendAll(fd, &reply.header, sizeof(reply.header), deadline, peerName(h.src));
        if (!reply.payload.empty())
          (void)!net::sendAll(fd, reply.payload.data(), reply.payload.size(), deadline,
                              peerName(h.src));
      }
      break;
    }
    case FaultKind::Decide: {
      std::lock_guard<std::mutex> lock(mutex);
      AgreementRecord& record = agreements[h.instance];
      // A decision is final: whoever holds one never changes it.
      if (record.stage != AgreeStage::Decided && message.payload.size() == peers_.size()) {
        record.stage = AgreeStage::Decided;
        record.ballot = h.ballot;
        record.flag = h.flag;
        record.failed = message.payload;
      }
      changed.notify_all();
      break;
    }
    case FaultKind::ShrinkId: {
      std::lock_guard<std::mutex> lock(mutex);
      shrinkIds[h.instance] = std::move(message);
      changed.notify_all();
      break;
    }
    default:
      SPCCL_INFO(kLogInit, "rank %d: fault service: unknown message kind %u from rank %d",
                 keys_.rank, h.kind, h.src);
  }
}

void FaultService::serve() {
  while (!stopping_) {
    pollfd fds[2] = {{listenFd_, POLLIN, 0}, {wakeFds_[0], POLLIN, 0}};
    // The wake pipe ends the wait at destruction; the period only bounds
    // how long a lost wake-up could delay it.
    int ready = ::poll(fds, 2, 1000);
    if (ready <= 0 || stopping_) continue;
    if (fds[0].revents & POLLIN) {
      for (;;) {
        int fd = -1;
        net::SockAddr from;
        if (net::acceptNow(listenFd_, &fd, &from) != spcclSuccess || fd < 0) break;
        handle(fd);
        ::close(fd);
      }
    }
  }
}

}  // namespace spccl

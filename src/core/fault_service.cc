#include "core/fault_service.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <thread>
#include <utility>

#include "base/check.h"
#include "base/clock.h"
#include "base/knobs.h"
#include "base/log.h"

namespace spccl {

namespace {

// A connection gets this long to deliver its message: the sender has it
// ready, so only a stalled or hostile sender takes it, holding a slot.
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
  // A deep backlog, as the tcp transport's: the thread starts serving only
  // once the communicator exists, and a flood during its creation must not
  // make a rank's connection wait for a SYN retransmission.
  SPCCL_CHECK(net::listenOn(iface.addr, SOMAXCONN, &listenFd_, advertised));
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
      try {
        (void)send(r, std::move(message), Deadline(std::min<int64_t>(kRelayMs, timeoutMs_)),
                   nullptr);
      } catch (const std::bad_alloc&) {
        // (Out of memory: that rank hears of the revoke from another
        // relay, or at its next call's failure; this thread must not end
        // the process.)
      }
    }
  });
}

void FaultService::catchUp(int64_t maxMs) {
  if (!thread_.joinable()) return;
  std::unique_lock<std::mutex> lock(catchUpMutex_);
  const uint64_t request = ++catchUpRequests_;
  char byte = 1;
  (void)!::write(wakeFds_[1], &byte, 1);  // ends a poll in progress
  caughtUp_.wait_for(lock, std::chrono::milliseconds(maxMs),
                     [&] { return catchUpServed_ >= request || stopping_; });
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

void FaultService::handle(int fd, FaultMessage message) {
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
      // The asker waits for it: the socket's buffer takes it at once.
      Deadline deadline(kMessageReadMs);
      if (sealFaultMessage(keys_, &reply) == spcclSuccess &&
          net::sendAll(fd, &reply.header, sizeof(reply.header), deadline, peerName(h.src)) ==
              spcclSuccess &&
          !reply.payload.empty())
        (void)!net::sendAll(fd, reply.payload.data(), reply.payload.size(), deadline,
                            peerName(h.src));
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

namespace {

// A connection whose message is still coming in; it closes its socket
// (also where an allocation failed while it was being read or stored).
struct Incoming {
  int fd = -1;
  int64_t deadlineMs = 0;
  FaultMessage message;
  size_t have = 0;  // bytes of header, then of header and payload, received

  Incoming() = default;
  Incoming(Incoming&& other) noexcept
      : fd(std::exchange(other.fd, -1)),
        deadlineMs(other.deadlineMs),
        message(std::move(other.message)),
        have(other.have) {}
  Incoming& operator=(Incoming&& other) noexcept {
    if (this != &other) {
      if (fd >= 0) ::close(fd);
      fd = std::exchange(other.fd, -1);
      deadlineMs = other.deadlineMs;
      message = std::move(other.message);
      have = other.have;
    }
    return *this;
  }
  Incoming(const Incoming&) = delete;
  Incoming& operator=(const Incoming&) = delete;
  ~Incoming() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads what is there. True when the connection is done with: the message
// is complete (*complete), or it failed (logged at INFO).
bool readIncoming(const FaultChannelKeys& keys, Incoming& in, bool* complete) {
  *complete = false;
  constexpr size_t kHeader = sizeof(FaultHeader);
  for (;;) {
    size_t want = kHeader + in.message.payload.size();
    if (in.have == want && in.have >= kHeader) {
      *complete = checkFaultSeal(keys, in.message) == spcclSuccess;
      return true;
    }
    unsigned char* at = in.have < kHeader
                            ? reinterpret_cast<unsigned char*>(&in.message.header) + in.have
                            : in.message.payload.data() + (in.have - kHeader);
    size_t room = in.have < kHeader ? kHeader - in.have : want - in.have;
    size_t moved = 0;
    if (net::recvNow(in.fd, at, room, &moved, "a fault-channel peer") != spcclSuccess) return true;
    if (moved == 0) return false;  // would block
    in.have += moved;
    if (in.have == kHeader) {
      if (checkFaultHeader(keys, in.message.header) != spcclSuccess) return true;
      in.message.payload.resize(in.message.header.payloadBytes);
    }
  }
}

}  // namespace

void FaultService::serve() {
  // Beyond this many connections at once, the oldest is dropped: a flood of
  // idle ones evicts itself, while a rank's message is read as it arrives.
  constexpr size_t kMaxIncoming = 1024;
  std::vector<Incoming> incoming;
  auto drop = [&](size_t i) {
    incoming.erase(incoming.begin() + static_cast<std::ptrdiff_t>(i));  // (closes it)
  };
  uint64_t answering = 0;  // the catchUp request this iteration serves
  // One poll and what it found. Returns early where there is nothing to read.
  auto iteration = [&] {
    bool hurry = false;
    {
      // The iteration before has ended: it served the requests made before
      // it began. One made since is served by this one, which polls the
      // listener now and so sees whatever waited when it was made.
      std::lock_guard<std::mutex> lock(catchUpMutex_);
      catchUpServed_ = answering;
      hurry = catchUpRequests_ > answering;
      answering = catchUpRequests_;
    }
    caughtUp_.notify_all();
    std::vector<pollfd> fds = {{listenFd_, POLLIN, 0}, {wakeFds_[0], POLLIN, 0}};
    // The wake pipe ends it at destruction; this bounds a lost wake-up.
    int64_t waitMs = hurry ? 0 : 1000;
    const int64_t now = monotonicMs();
    for (const Incoming& in : incoming) {
      fds.push_back({in.fd, POLLIN, 0});
      waitMs = std::min(waitMs, std::max<int64_t>(in.deadlineMs - now, 0));
    }
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(waitMs));
    if (ready < 0 || stopping_) return;
    if (fds[1].revents & POLLIN) {  // catchUp's wake-ups: the pipe must not stay readable
      char drain[64];
      while (::read(wakeFds_[0], drain, sizeof drain) > 0) {
      }
    }
    QuietFailures quiet;  // bad messages are dropped, logged at INFO
    // Connections first (their fds are fds[2...] in order), then new ones.
    for (size_t i = incoming.size(); i-- > 0;) {
      bool done = false, complete = false;
      if (fds[2 + i].revents != 0) done = readIncoming(keys_, incoming[i], &complete);
      if (!done && monotonicMs() >= incoming[i].deadlineMs) {
        SPCCL_INFO(kLogInit,
                   "rank %d: fault service: a connection sent no complete message "
                   "within %lld ms, dropped",
                   keys_.rank, static_cast<long long>(kMessageReadMs));
        done = true;
      }
      if (!done) continue;
      if (complete)
        handle(incoming[i].fd, std::move(incoming[i].message));
      else if (incoming[i].have > 0)
        SPCCL_INFO(kLogInit, "rank %d: fault service: %s", keys_.rank, threadLastError().c_str());
      drop(i);
    }
    if ((fds[0].revents & POLLIN) == 0) return;
    for (;;) {
      Incoming in;
      net::SockAddr from;
      if (net::acceptNow(listenFd_, &in.fd, &from) != spcclSuccess || in.fd < 0) break;
      if (incoming.size() >= kMaxIncoming) drop(0);
      in.deadlineMs = monotonicMs() + kMessageReadMs;
      bool complete = false;
      // A rank writes its message right after connecting: often it is here.
      if (readIncoming(keys_, in, &complete)) {
        if (complete) handle(in.fd, std::move(in.message));
        continue;  // (`in` closes it)
      }
      incoming.push_back(std::move(in));
    }
  };
  while (!stopping_) {
    try {
      iteration();
    } catch (const std::exception&) {
      // Out of memory (std::bad_alloc) or a relay thread that could not
      // start (std::system_error) on this thread, which no call's error
      // can report and which must not end the process: drop the
      // connections half read (their senders retry until their deadline;
      // this frees their buffers) and go on after a pause. Nothing here
      // allocates.
      incoming.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

}  // namespace spccl

#include "core/bootstrap.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "base/check.h"
#include "base/knobs.h"

namespace spccl {

namespace {

uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 1469598103934665603ull) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

HandshakeContext rootContext(HandshakeRole role, uint64_t commId, int rank) {
  HandshakeContext context;
  context.role = role;
  context.commId = commId;
  bool fromRoot = role != HandshakeRole::RendezvousClient;
  context.srcRank = fromRoot ? -1 : rank;
  context.dstRank = fromRoot ? rank : -1;
  return context;
}

// The MAC over a reply and its table (nullptr: none).
spcclResult_t replyMac(const JobSecret& secret, uint64_t commId, int rank, const Nonce& nonceC,
                       const Nonce& nonceS, const RootReply& reply,
                       const std::vector<RankInfo>* table, Mac* out) {
  std::vector<unsigned char> payload(sizeof(reply));
  std::memcpy(payload.data(), &reply, sizeof(reply));
  if (table) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(table->data());
    payload.insert(payload.end(), bytes, bytes + table->size() * sizeof(RankInfo));
  }
  return handshakeMac(secret, rootContext(HandshakeRole::RendezvousReply, commId, rank), nonceC,
                      nonceS, payload.data(), payload.size(), out);
}

// The jobs (by communicator id) whose rendezvous root runs in this process.
// Never destroyed: detached root threads may still use it while the process
// exits.
struct RunningRoots {
  std::mutex mutex;
  std::condition_variable done;
  std::multiset<uint64_t> commIds;
};
RunningRoots& runningRoots() {
  static RunningRoots* roots = new RunningRoots;
  return *roots;
}

// Refusals, logged once per source address and summed up at the end.
class RefusalLog {
 public:
  RefusalLog(std::string who) : who_(std::move(who)) {}
  void refuse(const std::string& source, const std::string& peer, const char* reason) {
    if (counts_[source]++ == 0)
      SPCCL_WARN("%s: refused connection from %s: %s (further refusals from %s are counted)",
                 who_.c_str(), peer.c_str(), reason, source.c_str());
  }
  void summarize() const {
    if (counts_.empty()) return;
    std::string list;
    size_t total = 0;
    for (const auto& [source, count] : counts_) {
      total += count;
      list += (list.empty() ? "" : ", ") + source + " x" + std::to_string(count);
    }
    SPCCL_WARN("%s: refused %zu connection(s) from %zu address(es): %s", who_.c_str(), total,
               counts_.size(), list.c_str());
  }

 private:
  std::string who_;
  std::map<std::string, size_t> counts_;
};

// One connection to the root, from accept to the end of the rendezvous.
struct RootConnection {
  enum class Phase { Hello, Proof, Joined };
  int fd = -1;
  std::string peer, source;
  Phase phase = Phase::Hello;
  int64_t acceptedMs = 0;
  int64_t joinedMs = 0;
  uint64_t serial = 0;  // accept order: the oldest is evicted first
  ClientHello hello{};
  Nonce nonceS{};
  std::unique_ptr<ClientProof> proof;  // allocated once the hello checked out
  size_t got = 0;                      // bytes of the message being read
};

class RendezvousRoot {
 public:
  // onReplied: called once every rank that joined has its reply (the
  // root may go on answering late ranks after a failure).
  RendezvousRoot(int listenFd, const JobSecret& secret, uint64_t commId, int64_t timeoutMs,
                 std::function<void()> onReplied)
      : onReplied_(std::move(onReplied)),
        listenFd_(listenFd),
        secret_(secret),
        commId_(commId),
        timeoutMs_(timeoutMs),
        deadline_(timeoutMs),
        handshakeMs_(knobInt("SPCCL_HANDSHAKE_TIMEOUT_MS")),
        perSource_(
            static_cast<size_t>(std::max<int64_t>(1, knobInt("SPCCL_MAX_UNAUTH_PER_SOURCE")))),
        refusals_("rendezvous root") {}

  void serve() {
    net::setNonBlocking(listenFd_, true);
    while (!finished_) {
      if (deadline_.expired()) {
        RootReply reply{};
        reply.status = spcclTimeout;
        std::snprintf(reply.message, sizeof(reply.message),
                      "rendezvous root: only %d of %d ranks arrived within %" PRId64 " ms",
                      arrived_, expected_, timeoutMs_);
        SPCCL_WARN("%s", reply.message);
        if (!failure_) replyToJoined(reply, nullptr, Deadline(1000));
        break;
      }
      pollOnce();
      acceptPending();
      expireHandshakes();
    }
    for (RootConnection& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
    ::close(listenFd_);
    refusals_.summarize();
    replied();
  }

 private:
  void pollOnce() {
    std::vector<pollfd> fds;
    fds.push_back({listenFd_, POLLIN, 0});
    // A joined rank sends nothing more until its reply: a joined
    // connection that becomes readable has closed (or says goodbye).
    std::vector<size_t> polled;  // fds[j + 1] is conns_[polled[j]]'s
    for (size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].fd >= 0) {
        fds.push_back({conns_[i].fd, POLLIN | POLLRDHUP, 0});
        polled.push_back(i);
      }
    int64_t wait = std::min<int64_t>(deadline_.remainingMs(), 100);
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait, 1)));
    // conns_ does not grow here; a handler may close other connections
    // (a failed rendezvous closes every joined one).
    for (size_t j = 0; j < polled.size() && !finished_; ++j) {
      RootConnection& c = conns_[polled[j]];
      if (c.fd < 0 || fds[j + 1].revents == 0) continue;
      if (c.phase == RootConnection::Phase::Joined)
        checkJoined(c);
      else
        readFrom(c);
    }
    std::erase_if(conns_, [](const RootConnection& c) { return c.fd < 0; });
  }

  size_t unauthenticatedFrom(const std::string& source) const {
    size_t n = 0;
    for (const RootConnection& c : conns_)
      n += c.fd >= 0 && c.phase != RootConnection::Phase::Joined && c.source == source;
    return n;
  }

  void acceptPending() {
    for (;;) {
      int fd = -1;
      net::SockAddr peer{};
      if (net::acceptNow(listenFd_, &fd, &peer) != spcclSuccess || fd < 0) return;
      RootConnection c;
      c.fd = fd;
      c.peer = net::toString(peer);
      c.source = net::hostString(peer);
      c.acceptedMs = monotonicMs();
      c.serial = nextSerial_++;
      // Over the cap, the source's oldest unauthenticated connection makes
      // room: an idle or slow one has had its chance, a new one may be a
      // rank that authenticates in one round trip.
      if (unauthenticatedFrom(c.source) >= perSource_) {
        // Those still in the hello go first: a connection in the proof
        // phase knew the communicator id, so it is most likely a rank.
        RootConnection* oldest = nullptr;
        auto older = [](const RootConnection& a, const RootConnection* b) {
          if (!b) return true;
          bool aHello = a.phase == RootConnection::Phase::Hello;
          bool bHello = b->phase == RootConnection::Phase::Hello;
          return aHello != bHello ? aHello : a.serial < b->serial;
        };
        for (RootConnection& other : conns_)
          if (other.fd >= 0 && other.phase != RootConnection::Phase::Joined &&
              other.source == c.source && older(other, oldest))
            oldest = &other;
        if (oldest) refuse(*oldest, "too many unauthenticated connections from this address");
      }
      conns_.push_back(std::move(c));
    }
  }

  void expireHandshakes() {
    int64_t now = monotonicMs();
    for (RootConnection& c : conns_)
      if (c.fd >= 0 && c.phase != RootConnection::Phase::Joined &&
          now - c.acceptedMs > handshakeMs_)
        refuse(c, "did not authenticate in time (SPCCL_HANDSHAKE_TIMEOUT_MS)");
    std::erase_if(conns_, [](const RootConnection& c) { return c.fd < 0; });
  }

  void refuse(RootConnection& c, const char* reason) {
    refusals_.refuse(c.source, c.peer, reason);
    ::close(c.fd);
    c.fd = -1;
  }

  // Reads what the socket has of the message this connection's phase expects.
  void readFrom(RootConnection& c) {
    unsigned char* target = c.phase == RootConnection::Phase::Hello
                                ? reinterpret_cast<unsigned char*>(&c.hello)
                                : reinterpret_cast<unsigned char*>(c.proof.get());
    size_t want =
        c.phase == RootConnection::Phase::Hello ? sizeof(ClientHello) : sizeof(ClientProof);
    ssize_t n = ::recv(c.fd, target + c.got, want - c.got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      refuse(c, "closed before authenticating");
      return;
    }
    c.got += static_cast<size_t>(n);
    if (c.got < want) return;
    c.got = 0;
    if (c.phase == RootConnection::Phase::Hello)
      onHello(c);
    else
      onProof(c);
  }

  void onHello(RootConnection& c) {
    const ClientHello& h = c.hello;
    if (!helloAcceptable(h, commId_)) {
      refuse(c, "not a rendezvous hello of this communicator (protocol, version or id)");
      return;
    }
    RootChallenge challenge{};
    challenge.magic = kUniqueIdMagic;
    challenge.version = kHandshakeVersion;
    if (freshNonce(&c.nonceS) != spcclSuccess ||
        handshakeMac(secret_, rootContext(HandshakeRole::RendezvousRoot, commId_, h.rank), h.nonce,
                     c.nonceS, &h, sizeof(h), &challenge.mac) != spcclSuccess) {
      refuse(c, threadLastError().c_str());
      return;
    }
    challenge.nonce = c.nonceS;
    // 72 bytes into an empty socket buffer: all of it or a dead peer.
    if (::send(c.fd, &challenge, sizeof(challenge), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(sizeof(challenge))) {
      refuse(c, "could not take the challenge");
      return;
    }
    c.proof = std::make_unique<ClientProof>();
    c.phase = RootConnection::Phase::Proof;
  }

  void onProof(RootConnection& c) {
    const ClientHello& h = c.hello;
    std::vector<unsigned char> payload(sizeof(h) + sizeof(RankInfo));
    std::memcpy(payload.data(), &h, sizeof(h));
    std::memcpy(payload.data() + sizeof(h), &c.proof->info, sizeof(RankInfo));
    Mac expected{};
    if (handshakeMac(secret_, rootContext(HandshakeRole::RendezvousClient, commId_, h.rank),
                     h.nonce, c.nonceS, payload.data(), payload.size(),
                     &expected) != spcclSuccess ||
        !macEqual(expected, c.proof->mac)) {
      refuse(c, "failed authentication (wrong job secret)");
      return;
    }
    c.phase = RootConnection::Phase::Joined;
    c.joinedMs = monotonicMs();
    net::setNonBlocking(c.fd, false);
    if (failure_) {
      // A rank arriving after another one left: the same answer at once,
      // not the wait until its deadline.
      sendReply(c, *failure_, nullptr, Deadline(1000));
      ::close(c.fd);
      c.fd = -1;
      if (h.rank < expected_) rankSeen_[h.rank] = true;
      finished_ = std::count(rankSeen_.begin(), rankSeen_.end(), true) == expected_;
      return;
    }
    if (expected_ == 0) {
      expected_ = h.nranks;
      table_.assign(expected_, RankInfo{});
      rankArrived_.assign(expected_, false);
      rankSeen_.assign(expected_, false);
    }
    bool taken = h.rank < expected_ && rankArrived_[h.rank];
    if (h.nranks != expected_ || h.rank >= expected_ || taken) {
      RootReply reply{};
      reply.status = spcclInvalidUsage;
      std::snprintf(reply.message, sizeof(reply.message),
                    "rendezvous: rank %d (from %s) announced nranks=%d, but the job has %d ranks%s",
                    h.rank, c.peer.c_str(), h.nranks, expected_,
                    taken ? " and that rank already arrived" : "");
      SPCCL_WARN("%s", reply.message);
      sendReply(c, reply, nullptr, Deadline(1000));
      replyToJoined(reply, nullptr, Deadline(1000));
      finished_ = true;
      return;
    }
    table_[h.rank] = c.proof->info;
    rankArrived_[h.rank] = true;
    rankSeen_[h.rank] = true;
    ++arrived_;
    if (arrived_ == expected_) {
      RootReply reply{};
      reply.status = spcclSuccess;
      reply.nranks = static_cast<uint32_t>(expected_);
      replyToJoined(reply, &table_, deadline_);
      finished_ = true;
    }
  }

  // A joined connection became readable: the rank said goodbye, or its
  // connection closed or was reset (its process died, or its creation was
  // stopped). Only a rank that had joined counts as gone; one that never
  // arrived may still come, until the deadline.
  void checkJoined(RootConnection& c) {
    unsigned char goodbye = 0;
    ssize_t n = ::recv(c.fd, &goodbye, 1, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    const int rank = c.hello.rank;
    if (n == 1 && goodbye == kRendezvousGoodbyeTimedOut) {
      // Its own deadline passed first: it returned spcclTimeout, and the
      // others reach theirs as they would have (nothing new to tell them).
      SPCCL_INFO(kLogBootstrap, "rendezvous root: rank %d (%s) timed out and left", rank,
                 c.peer.c_str());
      rankArrived_[rank] = false;
      table_[rank] = RankInfo{};
      --arrived_;
      ::close(c.fd);
      c.fd = -1;
      return;
    }
    const char* how = n == 1 && goodbye == kRendezvousGoodbyeStopped
                          ? "had its creation stopped (spcclCommAbort or spcclCommDestroy)"
                      : n > 0 ? "sent bytes after joining"
                              : "closed its connection to the root (it died, or its creation "
                                "ended)";
    RootReply reply{};
    reply.status = spcclRemoteError;
    std::snprintf(reply.message, sizeof(reply.message),
                  "rendezvous: rank %d (host %s, %s, pid %d) %s %" PRId64
                  " ms after joining; %d of %d ranks had arrived",
                  rank, table_[rank].hostname, c.peer.c_str(), table_[rank].pid, how,
                  monotonicMs() - c.joinedMs, arrived_, expected_);
    SPCCL_WARN("%s", reply.message);
    ::close(c.fd);
    c.fd = -1;
    replyToJoined(reply, nullptr, Deadline(1000));
    for (RootConnection& other : conns_)
      if (other.fd >= 0 && other.phase == RootConnection::Phase::Joined) {
        ::close(other.fd);
        other.fd = -1;
      }
    failure_ = reply;
    replied();
    finished_ = std::count(rankSeen_.begin(), rankSeen_.end(), true) == expected_;
  }

  void replied() {
    if (onReplied_) onReplied_();
    onReplied_ = nullptr;
  }

  void sendReply(RootConnection& c, const RootReply& reply, const std::vector<RankInfo>* table,
                 const Deadline& deadline) {
    Mac mac{};
    if (replyMac(secret_, commId_, c.hello.rank, c.hello.nonce, c.nonceS, reply, table, &mac) !=
        spcclSuccess)
      return;
    if (net::sendAll(c.fd, &reply, sizeof(reply), deadline, c.peer) != spcclSuccess) return;
    if (table && net::sendAll(c.fd, table->data(), table->size() * sizeof(RankInfo), deadline,
                              c.peer) != spcclSuccess)
      return;
    net::sendAll(c.fd, mac.data(), mac.size(), deadline, c.peer);
  }

  void replyToJoined(const RootReply& reply, const std::vector<RankInfo>* table,
                     const Deadline& deadline) {
    for (RootConnection& c : conns_)
      if (c.fd >= 0 && c.phase == RootConnection::Phase::Joined)
        sendReply(c, reply, table, deadline);
  }

  std::function<void()> onReplied_;
  int listenFd_;
  JobSecret secret_;
  uint64_t commId_;
  int64_t timeoutMs_;
  Deadline deadline_;
  int64_t handshakeMs_;
  size_t perSource_;
  RefusalLog refusals_;
  std::vector<RootConnection> conns_;
  std::vector<RankInfo> table_;
  std::vector<bool> rankArrived_;
  std::vector<bool> rankSeen_;        // joined at some point, left since or not
  std::optional<RootReply> failure_;  // a joined rank left: every rank's answer
  int expected_ = 0, arrived_ = 0;
  uint64_t nextSerial_ = 0;
  bool finished_ = false;
};

}  // namespace

uint64_t randomU64() {
  uint64_t value = 0;
  while (value == 0)
    if (randomBytes(&value, sizeof(value)) != spcclSuccess)
      value = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
              static_cast<uint64_t>(monotonicMs());
  return value;
}

void terminateRankInfoText(RankInfo* info) {
  info->hostname[sizeof(info->hostname) - 1] = '\0';
  info->setupError[sizeof(info->setupError) - 1] = '\0';
  info->job.transport[sizeof(info->job.transport) - 1] = '\0';
  info->job.algorithm[sizeof(info->job.algorithm) - 1] = '\0';
  info->job.tls[sizeof(info->job.tls) - 1] = '\0';
  info->job.wireChecksum[sizeof(info->job.wireChecksum) - 1] = '\0';
}

bool helloAcceptable(const ClientHello& h, uint64_t commId) {
  return h.magic == kUniqueIdMagic && h.version == kHandshakeVersion &&
         h.infoBytes == sizeof(RankInfo) && h.commId == commId && h.nranks >= 1 && h.rank >= 0 &&
         h.rank < h.nranks;
}

spcclUniqueId encodeUniqueId(const UniqueIdContents& contents) {
  spcclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(id.internal, &contents, sizeof(contents));
  return id;
}

spcclResult_t decodeUniqueId(const spcclUniqueId& id, UniqueIdContents* out) {
  std::memcpy(out, id.internal, sizeof(*out));
  if (out->magic != kUniqueIdMagic || out->version != kUniqueIdVersion ||
      out->secret.size > kSecretMaxBytes)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "commId is not an spccl unique id of this version (magic 0x%08x, version "
                      "%u); create it with spcclGetUniqueId",
                      out->magic, out->version);
  return spcclSuccess;
}

void startRendezvousRoot(int listenFd, const JobSecret& secret, uint64_t commId,
                         int64_t timeoutMs) {
  RunningRoots& roots = runningRoots();
  {
    std::lock_guard<std::mutex> lock(roots.mutex);
    roots.commIds.insert(commId);
  }
  // Once every joined rank has its reply, waitForRendezvousRoot stops
  // waiting, though the root may go on answering late ranks (a failure).
  auto replied = [commId, &roots, once = std::make_shared<bool>(false)] {
    std::lock_guard<std::mutex> lock(roots.mutex);
    if (std::exchange(*once, true)) return;
    roots.commIds.erase(roots.commIds.find(commId));
    roots.done.notify_all();
  };
  std::thread([listenFd, secret, commId, timeoutMs, replied] {
    try {
      RendezvousRoot(listenFd, secret, commId, timeoutMs, replied).serve();
    } catch (const std::exception& e) {
      // The ranks' rendezvous then fails at its deadline, naming the root.
      SPCCL_WARN("rendezvous root for communicator %016llx stopped: %s",
                 static_cast<unsigned long long>(commId), e.what());
      replied();  // serve() did not get to it
    }
  }).detach();
}

void waitForRendezvousRoot(uint64_t commId, int64_t maxMs) {
  RunningRoots& roots = runningRoots();
  std::unique_lock<std::mutex> lock(roots.mutex);
  roots.done.wait_for(lock, std::chrono::milliseconds(maxMs),
                      [&roots, commId] { return roots.commIds.count(commId) == 0; });
}

namespace {

// One attempt at the rendezvous handshake. *retry: the root closed the
// connection before its challenge (it is not up yet, or it dropped this
// connection to make room): worth another try while the deadline allows.
// *rootAnswered: set once the root proved itself (its challenge checked
// out); from then on its listener is known to be up, and a refusal means
// it is gone.
spcclResult_t rendezvousOnce(const UniqueIdContents& id, const RankInfo& mine,
                             const Deadline& deadline, const std::string& rootName,
                             std::vector<RankInfo>* all, bool* retry, bool* rootAnswered) {
  *retry = false;
  int fd = -1;
  if (spcclResult_t res = net::connectWithRetry(id.root, deadline, &fd, *rootAnswered);
      res != spcclSuccess) {
    if (res != spcclRemoteError || !*rootAnswered) return res;
    return SPCCL_FAIL(spcclRemoteError,
                      "rank %d: %s closed this rank's connection after answering it, and now "
                      "refuses connections: the process that hosts it (rank 0 under spcclrun, "
                      "else the caller of spcclGetUniqueId) died or stopped (%s)",
                      mine.rank, rootName.c_str(), threadLastError().c_str());
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ClientHello hello{};
  hello.magic = kUniqueIdMagic;
  hello.version = kHandshakeVersion;
  hello.rank = mine.rank;
  hello.nranks = mine.nranks;
  hello.infoBytes = sizeof(RankInfo);
  hello.commId = id.commId;
  SPCCL_CHECK(freshNonce(&hello.nonce));
  // Until the reply arrives, a closed connection is worth another try: the
  // root drops connections to make room under a flood (its answer to our
  // challenge proved it has this job's secret, so it never refuses our proof).
  auto dropped = [&](spcclResult_t res) {
    *retry = res != spcclSuccess && !deadline.expired();
    return res;
  };
  if (spcclResult_t res = net::sendAll(fd, &hello, sizeof(hello), deadline, rootName);
      res != spcclSuccess)
    return dropped(res);
  RootChallenge challenge{};
  if (spcclResult_t res = net::recvAll(fd, &challenge, sizeof(challenge), deadline, rootName);
      res != spcclSuccess)
    return dropped(res);
  Mac expected{};
  SPCCL_CHECK(handshakeMac(id.secret,
                           rootContext(HandshakeRole::RendezvousRoot, id.commId, mine.rank),
                           hello.nonce, challenge.nonce, &hello, sizeof(hello), &expected));
  if (challenge.magic != kUniqueIdMagic || challenge.version != kHandshakeVersion ||
      !macEqual(expected, challenge.mac))
    return SPCCL_FAIL(spcclRemoteError,
                      "rank %d: %s failed authentication: its answer to our challenge does not "
                      "match this job's secret (a different job secret on this rank or the "
                      "root, or not spccl's rendezvous root)",
                      mine.rank, rootName.c_str());
  *rootAnswered = true;
  auto proof = std::make_unique<ClientProof>();
  proof->info = mine;
  std::vector<unsigned char> payload(sizeof(hello) + sizeof(RankInfo));
  std::memcpy(payload.data(), &hello, sizeof(hello));
  std::memcpy(payload.data() + sizeof(hello), &mine, sizeof(RankInfo));
  SPCCL_CHECK(
      handshakeMac(id.secret, rootContext(HandshakeRole::RendezvousClient, id.commId, mine.rank),
                   hello.nonce, challenge.nonce, payload.data(), payload.size(), &proof->mac));
  if (spcclResult_t res = net::sendAll(fd, proof.get(), sizeof(ClientProof), deadline, rootName);
      res != spcclSuccess)
    return dropped(res);
  RootReply reply{};
  if (spcclResult_t res = net::recvAll(fd, &reply, sizeof(reply), deadline, rootName);
      res != spcclSuccess) {
    if (deadline.expired()) {
      // Tell the root why this rank leaves, so that it does not report it
      // to the others as dead (bootstrap.h).
      const unsigned char goodbye =
          deadline.cancelled() ? kRendezvousGoodbyeStopped : kRendezvousGoodbyeTimedOut;
      (void)::send(fd, &goodbye, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    return dropped(res);
  }
  std::vector<RankInfo> table;
  if (reply.status == spcclSuccess) {
    if (reply.nranks != static_cast<uint32_t>(mine.nranks))
      return SPCCL_FAIL(spcclRemoteError, "%s sent a table of %u ranks; this job has %d",
                        rootName.c_str(), reply.nranks, mine.nranks);
    table.assign(reply.nranks, RankInfo{});
    SPCCL_CHECK(
        net::recvAll(fd, table.data(), table.size() * sizeof(RankInfo), deadline, rootName));
  }
  Mac mac{}, expectedMac{};
  SPCCL_CHECK(net::recvAll(fd, mac.data(), mac.size(), deadline, rootName));
  SPCCL_CHECK(replyMac(id.secret, id.commId, mine.rank, hello.nonce, challenge.nonce, reply,
                       reply.status == spcclSuccess ? &table : nullptr, &expectedMac));
  if (!macEqual(mac, expectedMac))
    return SPCCL_FAIL(spcclRemoteError, "rank %d: the reply of %s failed authentication", mine.rank,
                      rootName.c_str());
  if (reply.status != spcclSuccess) {
    reply.message[sizeof(reply.message) - 1] = '\0';
    return SPCCL_FAIL(static_cast<spcclResult_t>(reply.status), "%s", reply.message);
  }
  for (RankInfo& info : table) terminateRankInfoText(&info);
  *all = std::move(table);
  return spcclSuccess;
}

}  // namespace

spcclResult_t exchangeRankInfo(const UniqueIdContents& id, const RankInfo& mine, int64_t timeoutMs,
                               std::vector<RankInfo>* all, const std::atomic<bool>* cancel) {
  Deadline deadline(timeoutMs, cancel);
  std::string rootName = "rendezvous root " + net::toString(id.root);
  bool rootAnswered = false;
  for (;;) {
    bool retry = false;
    spcclResult_t res = rendezvousOnce(id, mine, deadline, rootName, all, &retry, &rootAnswered);
    // The usual reason a rank waits for its table until the deadline: a
    // rank that never called init. Said in those words, with the wait's own.
    if (!retry && res == spcclTimeout && !deadline.cancelled())
      return SPCCL_FAIL(spcclTimeout,
                        "rank %d: the rendezvous timed out after %" PRId64
                        " ms: not all %d ranks reached %s (a rank that never called init, or a "
                        "root that cannot be reached): %s",
                        mine.rank, timeoutMs, mine.nranks, rootName.c_str(),
                        threadLastError().c_str());
    if (!retry) return res;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (deadline.expired())
      return SPCCL_FAIL(spcclTimeout,
                        "rank %d: %s closed every connection before its challenge for %" PRId64
                        " ms (not this communicator's root, or flooded)",
                        mine.rank, rootName.c_str(), timeoutMs);
  }
}

uint64_t localHostId() {
  std::string override = knobString("SPCCL_HOSTID");
  if (!override.empty()) return fnv1a(override.data(), override.size());
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  uint64_t hash = fnv1a(host, std::strlen(host));
  std::ifstream bootId("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(bootId, boot);
  hash = fnv1a(boot.data(), boot.size(), hash);
  struct stat ns {};
  if (::stat("/proc/self/ns/net", &ns) == 0) hash = fnv1a(&ns.st_ino, sizeof(ns.st_ino), hash);
  return hash;
}

}  // namespace spccl

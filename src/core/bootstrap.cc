#include "core/bootstrap.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "base/check.h"
#include "base/knobs.h"

namespace spccl {

namespace {

struct RootHello {
  uint32_t magic;
  uint32_t infoBytes;
  uint64_t secret;
  int32_t rank;
  int32_t nranks;
};

struct RootReply {
  uint32_t status;  // spcclResult_t
  uint32_t nranks;
  char message[256];
};

uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 1469598103934665603ull) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

void closeAll(std::vector<int>& fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  fds.clear();
}

void replyToAll(std::vector<int>& fds, const RootReply& reply, const std::vector<RankInfo>* table,
                const Deadline& deadline) {
  for (int fd : fds) {
    if (fd < 0) continue;
    if (net::sendAll(fd, &reply, sizeof(reply), deadline, "rank") != spcclSuccess) continue;
    if (table) net::sendAll(fd, table->data(), table->size() * sizeof(RankInfo), deadline, "rank");
  }
}

// The jobs (by secret) whose rendezvous root runs in this process. Never
// destroyed: detached root threads may still use it while the process exits.
struct RunningRoots {
  std::mutex mutex;
  std::condition_variable done;
  std::multiset<uint64_t> secrets;
};
RunningRoots& runningRoots() {
  static RunningRoots* roots = new RunningRoots;
  return *roots;
}

void serveRendezvous(int listenFd, uint64_t secret, int64_t timeoutMs) {
  Deadline deadline(timeoutMs);
  std::vector<RankInfo> table;
  std::vector<int> fds;  // by rank
  int expected = 0, arrived = 0;
  RootReply reply{};
  while (expected == 0 || arrived < expected) {
    int fd = -1;
    net::SockAddr peer{};
    if (net::acceptWithDeadline(listenFd, deadline, &fd, &peer) != spcclSuccess) {
      reply.status = spcclTimeout;
      std::snprintf(reply.message, sizeof(reply.message),
                    "rendezvous root: only %d of %d ranks arrived within %" PRId64 " ms", arrived,
                    expected, timeoutMs);
      SPCCL_WARN("%s", reply.message);
      replyToAll(fds, reply, nullptr, Deadline(1000));
      closeAll(fds);
      ::close(listenFd);
      return;
    }
    std::string who = net::toString(peer);
    RootHello hello{};
    RankInfo info;
    Deadline perConnection(std::min<int64_t>(deadline.remainingMs(), 10000));
    if (net::recvAll(fd, &hello, sizeof(hello), perConnection, who) != spcclSuccess ||
        hello.magic != kUniqueIdMagic || hello.secret != secret ||
        hello.infoBytes != sizeof(RankInfo)) {
      SPCCL_WARN("rendezvous root: refused connection from %s: wrong job secret or protocol",
                 who.c_str());
      ::close(fd);
      continue;
    }
    if (net::recvAll(fd, &info, sizeof(info), perConnection, who) != spcclSuccess) {
      ::close(fd);
      continue;
    }
    if (expected == 0) {
      expected = hello.nranks;
      table.assign(expected, RankInfo{});
      fds.assign(expected, -1);
    }
    if (hello.nranks != expected || hello.rank < 0 || hello.rank >= expected ||
        fds[hello.rank] >= 0) {
      reply.status = spcclInvalidUsage;
      std::snprintf(reply.message, sizeof(reply.message),
                    "rendezvous: rank %d (from %s) announced nranks=%d, but the job has %d ranks%s",
                    hello.rank, who.c_str(), hello.nranks, expected,
                    (hello.rank >= 0 && hello.rank < expected && fds[hello.rank] >= 0)
                        ? " and that rank already arrived"
                        : "");
      SPCCL_WARN("%s", reply.message);
      fds.push_back(fd);
      replyToAll(fds, reply, nullptr, Deadline(1000));
      closeAll(fds);
      ::close(listenFd);
      return;
    }
    table[hello.rank] = info;
    fds[hello.rank] = fd;
    ++arrived;
  }
  reply.status = spcclSuccess;
  reply.nranks = expected;
  replyToAll(fds, reply, &table, deadline);
  closeAll(fds);
  ::close(listenFd);
}

}  // namespace

uint64_t randomU64() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof(value), 0) != sizeof(value)) {
    value = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
            static_cast<uint64_t>(monotonicMs());
  }
  return value;
}

spcclUniqueId encodeUniqueId(const UniqueIdContents& contents) {
  spcclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(id.internal, &contents, sizeof(contents));
  return id;
}

spcclResult_t decodeUniqueId(const spcclUniqueId& id, UniqueIdContents* out) {
  std::memcpy(out, id.internal, sizeof(*out));
  if (out->magic != kUniqueIdMagic || out->version != 1)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "commId is not an spccl unique id (magic 0x%08x); create it with "
                      "spcclGetUniqueId",
                      out->magic);
  return spcclSuccess;
}

void startRendezvousRoot(int listenFd, uint64_t secret, int64_t timeoutMs) {
  RunningRoots& roots = runningRoots();
  {
    std::lock_guard<std::mutex> lock(roots.mutex);
    roots.secrets.insert(secret);
  }
  std::thread([listenFd, secret, timeoutMs, &roots] {
    serveRendezvous(listenFd, secret, timeoutMs);
    std::lock_guard<std::mutex> lock(roots.mutex);
    roots.secrets.erase(roots.secrets.find(secret));
    roots.done.notify_all();
  }).detach();
}

void waitForRendezvousRoot(uint64_t secret, int64_t maxMs) {
  RunningRoots& roots = runningRoots();
  std::unique_lock<std::mutex> lock(roots.mutex);
  roots.done.wait_for(lock, std::chrono::milliseconds(maxMs),
                      [&roots, secret] { return roots.secrets.count(secret) == 0; });
}

spcclResult_t exchangeRankInfo(const UniqueIdContents& id, const RankInfo& mine, int64_t timeoutMs,
                               std::vector<RankInfo>* all) {
  Deadline deadline(timeoutMs);
  std::string rootName = "rendezvous root " + net::toString(id.root);
  int fd = -1;
  SPCCL_CHECK(net::connectWithRetry(id.root, deadline, &fd));
  RootHello hello{kUniqueIdMagic, sizeof(RankInfo), id.secret, mine.rank, mine.nranks};
  spcclResult_t res = net::sendAll(fd, &hello, sizeof(hello), deadline, rootName);
  if (res == spcclSuccess) res = net::sendAll(fd, &mine, sizeof(mine), deadline, rootName);
  RootReply reply{};
  if (res == spcclSuccess) res = net::recvAll(fd, &reply, sizeof(reply), deadline, rootName);
  if (res == spcclSuccess && reply.status != spcclSuccess) {
    reply.message[sizeof(reply.message) - 1] = '\0';
    res = SPCCL_FAIL(static_cast<spcclResult_t>(reply.status), "%s", reply.message);
  }
  if (res == spcclSuccess) {
    all->assign(reply.nranks, RankInfo{});
    res = net::recvAll(fd, all->data(), all->size() * sizeof(RankInfo), deadline, rootName);
  }
  ::close(fd);
  return res;
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

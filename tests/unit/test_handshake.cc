// The authenticated handshake (core/handshake.h, core/bootstrap.cc): what
// the MAC binds, and a real rendezvous root against a rank with the wrong
// secret, a replayed rank and a reflected challenge. The replay and the
// reflection reuse the bytes a legitimate rank sent, recorded by a relay.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "base/check.h"
#include "base/socket.h"
#include "core/bootstrap.h"
#include "core/handshake.h"

namespace spccl {
namespace {

// Wire sizes of the rendezvous messages (bootstrap.cc): ClientHello,
// RootChallenge, then the proof's MAC ahead of the RankInfo.
constexpr size_t kHelloBytes = 64;
constexpr size_t kChallengeBytes = 72;

JobSecret randomSecret() {
  JobSecret secret;
  secret.size = kSecretMaxBytes;
  EXPECT_EQ(randomBytes(secret.bytes.data(), secret.size), spcclSuccess);
  return secret;
}

net::SockAddr loopback() {
  net::SockAddr addr{};
  EXPECT_EQ(net::parseHostPort("127.0.0.1:0", &addr), spcclSuccess);
  return addr;
}

// A root for a job of `nranks` on 127.0.0.1; returns its address.
net::SockAddr startRoot(const JobSecret& secret, uint64_t commId, int64_t timeoutMs) {
  int fd = -1;
  net::SockAddr bound{};
  EXPECT_EQ(net::listenOn(loopback(), 64, &fd, &bound), spcclSuccess);
  startRendezvousRoot(fd, secret, commId, timeoutMs);
  return bound;
}

RankInfo infoOf(int rank, int nranks) {
  RankInfo info;
  info.rank = rank;
  info.nranks = nranks;
  info.pid = getpid();
  std::snprintf(info.hostname, sizeof(info.hostname), "handshake-test");
  return info;
}

// Relays one connection to `target`, recording what the client sent.
class RecordingRelay {
 public:
  explicit RecordingRelay(const net::SockAddr& target) : target_(target) {
    EXPECT_EQ(net::listenOn(loopback(), 4, &listenFd_, &addr_), spcclSuccess);
    thread_ = std::thread([this] { run(); });
  }
  ~RecordingRelay() {
    thread_.join();
    ::close(listenFd_);
  }
  const net::SockAddr& address() const { return addr_; }
  std::vector<unsigned char> sent() {
    thread_.join();
    thread_ = std::thread([] {});
    return fromClient_;
  }

 private:
  void run() {
    int client = -1, server = -1;
    net::SockAddr peer{};
    if (net::acceptWithDeadline(listenFd_, Deadline(10000), &client, &peer) != spcclSuccess) return;
    if (net::connectWithRetry(target_, Deadline(10000), &server) != spcclSuccess) {
      ::close(client);
      return;
    }
    for (;;) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(fds, 2, 10000) <= 0) break;
      unsigned char buffer[65536];
      if (fds[0].revents) {
        ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        fromClient_.insert(fromClient_.end(), buffer, buffer + n);
        ::send(server, buffer, static_cast<size_t>(n), MSG_NOSIGNAL);
      }
      if (fds[1].revents) {
        ssize_t n = ::recv(server, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        ::send(client, buffer, static_cast<size_t>(n), MSG_NOSIGNAL);
      }
    }
    ::close(client);
    ::close(server);
  }

  net::SockAddr target_, addr_{};
  int listenFd_ = -1;
  std::thread thread_;
  std::vector<unsigned char> fromClient_;
};

// Sends `bytes` to the root, then reads until it closes; returns what came back.
std::vector<unsigned char> sendRaw(const net::SockAddr& root,
                                   const std::vector<unsigned char>& bytes) {
  int fd = -1;
  EXPECT_EQ(net::connectWithRetry(root, Deadline(5000), &fd), spcclSuccess);
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::vector<unsigned char> got;
  unsigned char buffer[4096];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    got.insert(got.end(), buffer, buffer + n);
  }
  ::close(fd);
  return got;
}

// A one-rank rendezvous through a relay: the bytes rank 0 sent.
std::vector<unsigned char> recordLegitimateRank(const JobSecret& secret, uint64_t commId) {
  net::SockAddr root = startRoot(secret, commId, 10000);
  RecordingRelay relay(root);
  UniqueIdContents id;
  id.root = relay.address();
  id.secret = secret;
  id.commId = commId;
  std::vector<RankInfo> table;
  EXPECT_EQ(exchangeRankInfo(id, infoOf(0, 1), 10000, &table), spcclSuccess) << threadLastError();
  EXPECT_EQ(table.size(), 1u);
  return relay.sent();
}

TEST(Handshake, MacBindsSecretRoleRanksLaneAndNonces) {
  JobSecret secret = randomSecret();
  Nonce a{}, b{};
  ASSERT_EQ(freshNonce(&a), spcclSuccess);
  ASSERT_EQ(freshNonce(&b), spcclSuccess);
  HandshakeContext base{HandshakeRole::DataConnect, 42, 1, 2, 0};
  Mac reference{};
  ASSERT_EQ(handshakeMac(secret, base, a, b, "x", 1, &reference), spcclSuccess);
  auto differs = [&](const JobSecret& s, HandshakeContext c, const Nonce& na, const Nonce& nb,
                     const char* payload) {
    Mac mac{};
    EXPECT_EQ(handshakeMac(s, c, na, nb, payload, 1, &mac), spcclSuccess);
    return !macEqual(mac, reference);
  };
  EXPECT_FALSE(differs(secret, base, a, b, "x")) << "deterministic";
  EXPECT_TRUE(differs(randomSecret(), base, a, b, "x"));
  HandshakeContext c = base;
  c.role = HandshakeRole::RendezvousClient;
  EXPECT_TRUE(differs(secret, c, a, b, "x"));
  c = base;
  c.commId = 43;
  EXPECT_TRUE(differs(secret, c, a, b, "x"));
  c = base;
  std::swap(c.srcRank, c.dstRank);
  EXPECT_TRUE(differs(secret, c, a, b, "x")) << "reflection: the other direction";
  c = base;
  c.lane = 1;
  EXPECT_TRUE(differs(secret, c, a, b, "x"));
  EXPECT_TRUE(differs(secret, base, b, a, "x")) << "nonces are ordered";
  EXPECT_TRUE(differs(secret, base, a, b, "y"));
}

TEST(Handshake, SplitSecretsDifferPerCommunicatorAndFromTheParent) {
  JobSecret parent = randomSecret(), one, two;
  ASSERT_EQ(deriveJobSecret(parent, 1, &one), spcclSuccess);
  ASSERT_EQ(deriveJobSecret(parent, 2, &two), spcclSuccess);
  EXPECT_EQ(one.size, kSecretMaxBytes);
  EXPECT_NE(formatJobSecret(one), formatJobSecret(two));
  EXPECT_NE(formatJobSecret(one), formatJobSecret(parent));
}

// A rank whose secret differs from the root's fails at once, naming the
// root's host:port; the root never sends it the table.
TEST(Handshake, WrongSecretFailsNamingTheRoot) {
  JobSecret secret = randomSecret();
  const uint64_t commId = randomU64();
  net::SockAddr root = startRoot(secret, commId, 3000);
  UniqueIdContents id;
  id.root = root;
  id.secret = randomSecret();
  id.commId = commId;
  std::vector<RankInfo> table;
  clearThreadLastError();
  int64_t start = monotonicMs();
  EXPECT_EQ(exchangeRankInfo(id, infoOf(0, 1), 3000, &table), spcclRemoteError);
  EXPECT_LT(monotonicMs() - start, 1000) << "no waiting for a deadline";
  std::string message = threadLastError();
  EXPECT_NE(message.find("failed authentication"), std::string::npos) << message;
  EXPECT_NE(message.find(net::toString(root)), std::string::npos) << message;
  EXPECT_TRUE(table.empty());
}

// The bytes a legitimate rank sent, replayed to a new root of the same job
// (same secret and id): the root's fresh nonce makes the recorded proof
// wrong, so the replayer gets the challenge and then a closed connection,
// and the real rank 0 still joins.
TEST(Handshake, ReplayedRankIsRefused) {
  JobSecret secret = randomSecret();
  const uint64_t commId = randomU64();
  std::vector<unsigned char> recorded = recordLegitimateRank(secret, commId);
  ASSERT_EQ(recorded.size(), kHelloBytes + kMacBytes + sizeof(RankInfo));
  net::SockAddr root = startRoot(secret, commId, 10000);
  std::vector<unsigned char> answer = sendRaw(root, recorded);
  EXPECT_EQ(answer.size(), kChallengeBytes) << "a challenge, then nothing: no reply, no table";
  UniqueIdContents id;
  id.root = root;
  id.secret = secret;
  id.commId = commId;
  std::vector<RankInfo> table;
  EXPECT_EQ(exchangeRankInfo(id, infoOf(0, 1), 10000, &table), spcclSuccess) << threadLastError();
}

// Reflection: an attacker without the secret sends a rank's hello, then
// hands the root its own answer (the MAC in its challenge) as the proof.
// The root's MAC is bound to the root's role, so it never verifies as a rank's.
TEST(Handshake, ReflectedChallengeIsRefused) {
  JobSecret secret = randomSecret();
  const uint64_t commId = randomU64();
  std::vector<unsigned char> recorded = recordLegitimateRank(secret, commId);
  ASSERT_GE(recorded.size(), kHelloBytes);
  net::SockAddr root = startRoot(secret, commId, 10000);
  int fd = -1;
  ASSERT_EQ(net::connectWithRetry(root, Deadline(5000), &fd), spcclSuccess);
  ASSERT_EQ(net::sendAll(fd, recorded.data(), kHelloBytes, Deadline(5000), "root"), spcclSuccess);
  std::vector<unsigned char> challenge(kChallengeBytes);
  ASSERT_EQ(net::recvAll(fd, challenge.data(), challenge.size(), Deadline(5000), "root"),
            spcclSuccess);
  std::vector<unsigned char> proof(challenge.end() - kMacBytes, challenge.end());
  proof.insert(proof.end(), recorded.begin() + kHelloBytes + kMacBytes, recorded.end());
  ASSERT_EQ(net::sendAll(fd, proof.data(), proof.size(), Deadline(5000), "root"), spcclSuccess);
  unsigned char byte = 0;
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the root must close, not reply";
  ::close(fd);
  UniqueIdContents id;
  id.root = root;
  id.secret = secret;
  id.commId = commId;
  std::vector<RankInfo> table;
  EXPECT_EQ(exchangeRankInfo(id, infoOf(0, 1), 10000, &table), spcclSuccess) << threadLastError();
}

}  // namespace
}  // namespace spccl

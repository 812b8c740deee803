// SPCCL_TLS on the tcp transport (transports/tcp/tls_*.h): the PSK's
// derivation against an independent HKDF, and two tcp comms in one process
// over loopback: a message through TLS, and a key mismatch that fails both
// ends of the handshake well before their deadline. The multi-process
// cases (all-reduce, the wire, certificates) are tests/security/test_tls.py.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "transports/tcp/tcp_net.h"
#include "transports/tcp/tcp_tls.h"
#include "transports/tcp/tls_keys.h"
#include "transports/tcp/tls_session.h"

namespace spccl::transport {
namespace {

std::string hex(const TlsPsk& key) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : key) {
    text += digits[b >> 4];
    text += digits[b & 15];
  }
  return text;
}

TEST(TlsKeys, HkdfSha256OfTheSecretLabelAndCommunicator) {
  unsigned char secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<unsigned char>(i);
  TlsPsk key{};
  ASSERT_EQ(deriveTlsPsk(secret, sizeof(secret), 0x0123456789abcdefull, &key), spcclSuccess);
  // Python: HKDF-Expand(HMAC-SHA256(32 zero bytes, secret),
  //   b"spccl tls psk v1" + struct.pack("<Q", id) + b"\x01")
  EXPECT_EQ(hex(key), "dd9fb65de07f2122c25a9256b96abf3904d55246345b26cc50b51eb4767d7c4d");
  TlsPsk other{};
  ASSERT_EQ(deriveTlsPsk(secret, sizeof(secret), 0x0123456789abcdeeull, &other), spcclSuccess);
  EXPECT_NE(key, other);
  secret[0] ^= 1;
  ASSERT_EQ(deriveTlsPsk(secret, sizeof(secret), 0x0123456789abcdefull, &other), spcclSuccess);
  EXPECT_NE(key, other);
  EXPECT_NE(deriveTlsPsk(secret, 0, 1, &other), spcclSuccess);
  EXPECT_EQ(tlsPskIdentity(0xabcull), "spccl-psk-v1:0000000000000abc");
}

TEST(TlsKeys, ModesAreParsedAndOthersRefusedNamingTheVariable) {
  TlsMode mode = TlsMode::Psk;
  EXPECT_EQ(parseTlsMode("off", &mode), spcclSuccess);
  EXPECT_EQ(mode, TlsMode::Off);
  EXPECT_EQ(parseTlsMode("psk", &mode), spcclSuccess);
  EXPECT_EQ(mode, TlsMode::Psk);
  EXPECT_EQ(parseTlsMode("cert", &mode), spcclSuccess);
  EXPECT_EQ(mode, TlsMode::Cert);
  EXPECT_EQ(parseTlsMode("PSK", &mode), spcclInvalidArgument);
  EXPECT_NE(threadLastError().find("SPCCL_TLS=PSK"), std::string::npos) << threadLastError();
}

std::shared_ptr<TlsContext> pskContext(unsigned char seed) {
  TlsSettings settings;
  settings.mode = TlsMode::Psk;
  settings.commId = 42;
  unsigned char secret[32];
  std::memset(secret, seed, sizeof(secret));
  EXPECT_EQ(deriveTlsPsk(secret, sizeof(secret), settings.commId, &settings.psk), spcclSuccess);
  std::shared_ptr<TlsContext> context;
  EXPECT_EQ(TlsContext::create(settings, &context), spcclSuccess) << threadLastError();
  return context;
}

// A listener and a connection to it on loopback, each with its own key.
class TlsTcp : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SPCCL_SOCKET_IFNAME", "lo", 1);
    spcclNetInitArgs_v2_t args{};
    args.socketIfname = "lo";
    args.timeoutMs = 10000;
    ASSERT_EQ(net_->init(&args), spcclSuccess) << threadLastError();
  }
  void TearDown() override {
    if (send_ != nullptr) net_->closeSend(send_);
    if (recv_ != nullptr) net_->closeRecv(recv_);
    if (listen_ != nullptr) net_->closeListen(listen_);
  }
  void connectPair(unsigned char listenerKey, unsigned char connectorKey) {
    unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE];
    ASSERT_EQ(net_->listen(0, handle, &listen_), spcclSuccess) << threadLastError();
    ASSERT_EQ(tcpUseTls(listen_, pskContext(listenerKey), ""), spcclSuccess);
    ASSERT_EQ(net_->connect(0, handle, &send_), spcclSuccess) << threadLastError();
    ASSERT_EQ(tcpUseTls(send_, pskContext(connectorKey), ""), spcclSuccess);
  }
  // Accepts, then tests both requests until both ended; false on a timeout.
  bool run(std::vector<char>& out, std::vector<char>& in, spcclResult_t* sendResult,
           spcclResult_t* recvResult, std::string* sendError, std::string* recvError) {
    void* sendRequest = nullptr;
    void* recvRequest = nullptr;
    EXPECT_EQ(net_->isend(send_, out.data(), out.size(), nullptr, &sendRequest), spcclSuccess);
    Deadline deadline(5000);
    bool sendDone = false, recvDone = false;
    while (!deadline.expired()) {
      if (recv_ == nullptr) {
        EXPECT_EQ(net_->accept(listen_, &recv_), spcclSuccess);
        if (recv_ != nullptr) {
          EXPECT_EQ(net_->irecv(recv_, in.data(), in.size(), nullptr, &recvRequest), spcclSuccess);
        }
      }
      int done = 0;
      if (!sendDone) {
        *sendResult = net_->test(sendRequest, &done, nullptr);
        if (*sendResult != spcclSuccess) *sendError = threadLastError();
        sendDone = done != 0 || *sendResult != spcclSuccess;
      }
      if (recvRequest != nullptr && !recvDone) {
        size_t size = 0;
        *recvResult = net_->test(recvRequest, &done, &size);
        if (*recvResult != spcclSuccess) *recvError = threadLastError();
        recvDone = done != 0 || *recvResult != spcclSuccess;
      }
      if (sendDone && recvDone) return true;
      std::vector<pollfd> fds;
      for (void* comm : {listen_, send_, recv_}) {
        if (comm == nullptr) continue;
        pollfd pfd{-1, 0, 0};
        net_->pollFd(comm, &pfd.fd, &pfd.events);
        if (pfd.fd >= 0 && pfd.events != 0) fds.push_back(pfd);
      }
      ::poll(fds.data(), fds.size(), 10);
    }
    return false;
  }

  const spcclNet_v2_t* net_ = spcclNetTcp();
  void* listen_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
};

TEST_F(TlsTcp, AMessageCrossesWithTheSameKey) {
  connectPair(7, 7);
  std::vector<char> out(3 << 20), in(4 << 20);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 131 + 7);
  spcclResult_t sendResult = spcclInternalError, recvResult = spcclInternalError;
  std::string sendError, recvError;
  ASSERT_TRUE(run(out, in, &sendResult, &recvResult, &sendError, &recvError));
  ASSERT_EQ(sendResult, spcclSuccess) << sendError;
  ASSERT_EQ(recvResult, spcclSuccess) << recvError;
  EXPECT_EQ(std::memcmp(out.data(), in.data(), out.size()), 0);
}

TEST_F(TlsTcp, AnotherKeyFailsBothEndsOfTheHandshake) {
  connectPair(7, 8);
  std::vector<char> out(1024), in(1024);
  spcclResult_t sendResult = spcclSuccess, recvResult = spcclSuccess;
  std::string sendError, recvError;
  const int64_t start = monotonicMs();
  ASSERT_TRUE(run(out, in, &sendResult, &recvResult, &sendError, &recvError));
  EXPECT_LT(monotonicMs() - start, 2000);
  EXPECT_NE(sendResult, spcclSuccess);
  EXPECT_NE(recvResult, spcclSuccess);
  EXPECT_NE(sendError.find("TLS handshake"), std::string::npos) << sendError;
  EXPECT_NE(recvError.find("TLS handshake"), std::string::npos) << recvError;
  std::printf("client: %s\nserver: %s\n", sendError.c_str(), recvError.c_str());
}

}  // namespace
}  // namespace spccl::transport

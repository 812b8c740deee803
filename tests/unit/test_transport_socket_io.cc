// The deadline-bounded socket helpers the tcp transport and bootstrap use:
// listen/connect/accept, full transfers, and errors that name the peer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "base/check.h"
#include "base/socket.h"

namespace spccl::net {
namespace {

SockAddr loopback() {
  SockAddr addr;
  EXPECT_EQ(parseHostPort("127.0.0.1:0", &addr), spcclSuccess);
  return addr;
}

TEST(SocketIo, ConnectAcceptAndTransferWholeBuffers) {
  int listenFd = -1;
  SockAddr bound;
  ASSERT_EQ(listenOn(loopback(), 4, &listenFd, &bound), spcclSuccess);
  ASSERT_NE(sockAddrPort(bound), 0);

  std::vector<char> sent(3 << 20);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 31);
  std::thread client([&] {
    int fd = -1;
    ASSERT_EQ(connectWithRetry(bound, Deadline(5000), &fd), spcclSuccess) << threadLastError();
    EXPECT_EQ(sendAll(fd, sent.data(), sent.size(), Deadline(5000), toString(bound)), spcclSuccess);
    close(fd);
  });
  int fd = -1;
  SockAddr peer;
  ASSERT_EQ(acceptWithDeadline(listenFd, Deadline(5000), &fd, &peer), spcclSuccess);
  std::vector<char> received(sent.size());
  EXPECT_EQ(recvAll(fd, received.data(), received.size(), Deadline(5000), toString(peer)),
            spcclSuccess);
  EXPECT_EQ(received, sent);

  // The client closed: the next receive names the peer and says what happened.
  char extra;
  EXPECT_EQ(recvAll(fd, &extra, 1, Deadline(5000), toString(peer)), spcclRemoteError);
  EXPECT_NE(threadLastError().find("peer " + toString(peer) + " closed the connection"),
            std::string::npos)
      << threadLastError();
  client.join();
  close(fd);
  close(listenFd);
}

TEST(SocketIo, WaitsEndAtTheirDeadline) {
  int listenFd = -1;
  SockAddr bound;
  ASSERT_EQ(listenOn(loopback(), 4, &listenFd, &bound), spcclSuccess);
  int fd = -1;
  SockAddr peer;
  double start = monotonicSeconds();
  EXPECT_EQ(acceptWithDeadline(listenFd, Deadline(100), &fd, &peer), spcclTimeout);

  // Nobody listens once the socket is closed: connect retries, then gives up.
  close(listenFd);
  EXPECT_EQ(connectWithRetry(bound, Deadline(300), &fd), spcclTimeout);
  EXPECT_NE(threadLastError().find(toString(bound)), std::string::npos) << threadLastError();
  EXPECT_LT(monotonicSeconds() - start, 3.0);
}

TEST(SocketIo, ConnectRetriesUntilTheListenerAppears) {
  // Find a free port, then listen on it only after the client started.
  int probe = -1;
  SockAddr bound;
  ASSERT_EQ(listenOn(loopback(), 4, &probe, &bound), spcclSuccess);
  close(probe);
  int clientFd = -1;
  spcclResult_t connected = spcclInternalError;
  std::thread client([&] { connected = connectWithRetry(bound, Deadline(5000), &clientFd); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  int listenFd = -1;
  SockAddr again;
  ASSERT_EQ(listenOn(bound, 4, &listenFd, &again), spcclSuccess);
  int fd = -1;
  SockAddr peer;
  EXPECT_EQ(acceptWithDeadline(listenFd, Deadline(5000), &fd, &peer), spcclSuccess);
  client.join();
  EXPECT_EQ(connected, spcclSuccess) << threadLastError();
  close(clientFd);
  close(fd);
  close(listenFd);
}

}  // namespace
}  // namespace spccl::net

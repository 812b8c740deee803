// The same scenarios over both built-in transports, between this process
// and a forked child: echo of many sizes in both directions with several
// requests outstanding, oversize receives, and a peer that dies mid-transfer.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "base/knobs.h"
#include "transports/shm/shm_net.h"
#include "transports/shm/shm_testing.h"
#include "transports/tcp/tcp_net.h"

namespace spccl::transport {
namespace {

constexpr int64_t kScenarioTimeoutMs = 60000;
constexpr size_t kWindow = 4;  // requests outstanding per direction
const std::vector<size_t> kSizes = {0, 1, 7, 4096, 8192, 8193, (1u << 20) + 3, 64u << 20};

unsigned char patternByte(size_t message, size_t offset) {
  return static_cast<unsigned char>(offset * 131 + message * 7 + 1);
}

std::vector<unsigned char> patterned(size_t message, size_t size) {
  std::vector<unsigned char> bytes(size);
  for (size_t k = 0; k < size; ++k) bytes[k] = patternByte(message, k);
  return bytes;
}

bool hasPattern(const unsigned char* data, size_t message, size_t size) {
  for (size_t k = 0; k < size; ++k)
    if (data[k] != patternByte(message, k)) return false;
  return true;
}

// ---- a small progress loop: test() pending requests, sleep on pollFd ----

class Pump {
 public:
  using OnDone = std::function<void(spcclResult_t, size_t)>;
  explicit Pump(const spcclNet_t* net) : net_(net) {}

  void add(void* comm, void* request, OnDone onDone) {
    pending_.push_back({comm, request, std::move(onDone)});
  }
  bool idle() const { return pending_.empty(); }

  // Runs until nothing is pending; spcclTimeout when the deadline passes first.
  spcclResult_t runUntilIdle(const Deadline& deadline) {
    while (!pending_.empty()) {
      if (deadline.expired()) return spcclTimeout;
      if (!runOnce()) sleepOnComms(std::min<int64_t>(deadline.remainingMs(), 50));
    }
    return spcclSuccess;
  }

  // Runs for about `ms` whatever happens (to let a transfer get going).
  void runFor(int64_t ms) {
    Deadline deadline(ms);
    while (!deadline.expired() && !pending_.empty())
      if (!runOnce()) sleepOnComms(std::min<int64_t>(deadline.remainingMs(), 10));
  }

 private:
  struct Entry {
    void* comm;
    void* request;
    OnDone onDone;
  };

  // One round over the pending requests; true if any finished. Requests of
  // one comm are reported in posted order: testing a later one may complete
  // earlier ones too, so once one of a comm is pending the rest of that
  // comm waits for the next round.
  bool runOnce() {
    bool finished = false;
    std::vector<void*> blockedComms;
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (std::find(blockedComms.begin(), blockedComms.end(), it->comm) != blockedComms.end()) {
        ++it;
        continue;
      }
      int done = 0;
      size_t size = 0;
      spcclResult_t res = net_->test(it->request, &done, &size);
      if (res == spcclSuccess && !done) {
        blockedComms.push_back(it->comm);
        ++it;
        continue;
      }
      OnDone onDone = std::move(it->onDone);
      it = pending_.erase(it);
      finished = true;
      onDone(res, size);  // may add more entries
    }
    return finished;
  }

  void sleepOnComms(int64_t ms) {
    std::vector<pollfd> fds;
    for (const Entry& entry : pending_) {
      pollfd pfd{-1, 0, 0};
      if (net_->pollFd(entry.comm, &pfd.fd, &pfd.events) != spcclSuccess || pfd.fd < 0) {
        ms = std::min<int64_t>(ms, 1);
        continue;
      }
      fds.push_back(pfd);
    }
    poll(fds.data(), fds.size(), static_cast<int>(ms));
  }

  const spcclNet_t* net_;
  std::list<Entry> pending_;
};

// ---- processes and pipes ----

struct PipePair {
  int toChild[2] = {-1, -1};
  int toParent[2] = {-1, -1};
  PipePair() {
    if (pipe(toChild) != 0 || pipe(toParent) != 0) std::abort();
  }
  ~PipePair() {
    for (int fd : {toChild[0], toChild[1], toParent[0], toParent[1]})
      if (fd >= 0) close(fd);
  }
};

bool writeBytes(int fd, const void* data, size_t size) {
  return write(fd, data, size) == static_cast<ssize_t>(size);
}

// Reads exactly size bytes or gives up at the deadline.
bool readBytes(int fd, void* data, size_t size, const Deadline& deadline) {
  size_t got = 0;
  while (got < size) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(deadline.remainingMs())) <= 0) return false;
    ssize_t n = read(fd, static_cast<char*>(data) + got, size - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// Forks; the child runs body and exits with its return value (0: success).
pid_t spawn(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 1;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  return pid;
}

// The child's exit status, or -1 if it had to be killed at the deadline.
int waitChild(pid_t pid, int64_t timeoutMs) {
  Deadline deadline(timeoutMs);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (deadline.expired()) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(2000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define CHILD_CHECK(cond)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "child check failed at line %d: %s\n", __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// ---- the fixture ----

struct TransportCase {
  const char* name;
  const spcclNet_t* (*table)();
};

class TransportLoopback : public ::testing::TestWithParam<TransportCase> {
 protected:
  void SetUp() override {
    net_ = GetParam().table();
    spcclNetInitArgs_v1_t args{};
    args.timeoutMs = 10000;
    ASSERT_EQ(net_->init(&args), spcclSuccess) << threadLastError();
  }

  // Accepts the next connection on listenComm, polling its fd until the deadline.
  spcclResult_t acceptOne(void* listenComm, void** recvComm, const Deadline& deadline) {
    for (;;) {
      spcclResult_t res = net_->accept(listenComm, recvComm);
      if (res != spcclSuccess || *recvComm != nullptr) return res;
      if (deadline.expired()) return spcclTimeout;
      pollfd pfd{-1, 0, 0};
      net_->pollFd(listenComm, &pfd.fd, &pfd.events);
      poll(&pfd, 1, 20);
    }
  }

  // The child side of the echo scenario: receives every message of kSizes
  // (kWindow posted at a time) and sends each back as soon as it arrived.
  int echoChild(void* sendComm, void* recvComm) {
    Pump pump(net_);
    std::vector<std::vector<unsigned char>> buffers(kSizes.size());
    size_t nextRecv = 0;
    bool ok = true;
    std::function<void()> postRecv = [&] {
      size_t i = nextRecv++;
      buffers[i].resize(kSizes[i]);
      void* request = nullptr;
      if (net_->irecv(recvComm, buffers[i].data(), kSizes[i], nullptr, &request) != spcclSuccess) {
        ok = false;
        return;
      }
      pump.add(recvComm, request, [&, i](spcclResult_t res, size_t size) {
        if (res != spcclSuccess || size != kSizes[i]) {
          fprintf(stderr, "echo child: message %zu: result %d, %zu bytes (%s)\n", i,
                  static_cast<int>(res), size, threadLastError().c_str());
          ok = false;
          return;
        }
        void* sendRequest = nullptr;
        if (net_->isend(sendComm, buffers[i].data(), size, nullptr, &sendRequest) != spcclSuccess) {
          ok = false;
          return;
        }
        pump.add(sendComm, sendRequest, [&, i](spcclResult_t sent, size_t) {
          if (sent != spcclSuccess)
            fprintf(stderr, "echo child: sending message %zu back failed: %s\n", i,
                    threadLastError().c_str());
          ok = ok && sent == spcclSuccess;
          std::vector<unsigned char>().swap(buffers[i]);
        });
        if (nextRecv < kSizes.size()) postRecv();
      });
    };
    for (size_t i = 0; i < kWindow; ++i) postRecv();
    CHILD_CHECK(pump.runUntilIdle(Deadline(kScenarioTimeoutMs)) == spcclSuccess);
    CHILD_CHECK(ok);
    return 0;
  }

  // The parent side of the echo scenario: sends every message of kSizes
  // (kWindow outstanding) and verifies the echoes.
  void echoParent(void* sendComm, void* recvComm) {
    Pump pump(net_);
    std::vector<std::vector<unsigned char>> outgoing(kSizes.size()), incoming(kSizes.size());
    size_t nextSend = 0, nextRecv = 0, verified = 0;
    std::function<void()> postSend = [&] {
      size_t i = nextSend++;
      outgoing[i] = patterned(i, kSizes[i]);
      void* request = nullptr;
      ASSERT_EQ(net_->isend(sendComm, outgoing[i].data(), kSizes[i], nullptr, &request),
                spcclSuccess)
          << threadLastError();
      pump.add(sendComm, request, [&, i](spcclResult_t res, size_t size) {
        EXPECT_EQ(res, spcclSuccess) << threadLastError();
        EXPECT_EQ(size, kSizes[i]);
        std::vector<unsigned char>().swap(outgoing[i]);
        if (nextSend < kSizes.size()) postSend();
      });
    };
    std::function<void()> postRecv = [&] {
      size_t i = nextRecv++;
      incoming[i].assign(kSizes[i] + 16, 0);  // spare capacity: the sender's size counts
      void* request = nullptr;
      ASSERT_EQ(net_->irecv(recvComm, incoming[i].data(), incoming[i].size(), nullptr, &request),
                spcclSuccess)
          << threadLastError();
      pump.add(recvComm, request, [&, i](spcclResult_t res, size_t size) {
        EXPECT_EQ(res, spcclSuccess) << threadLastError();
        EXPECT_EQ(size, kSizes[i]) << "message " << i;
        EXPECT_TRUE(hasPattern(incoming[i].data(), i, kSizes[i])) << "message " << i;
        std::vector<unsigned char>().swap(incoming[i]);
        ++verified;
        if (nextRecv < kSizes.size()) postRecv();
      });
    };
    for (size_t i = 0; i < kWindow; ++i) {
      postRecv();
      postSend();
    }
    ASSERT_EQ(pump.runUntilIdle(Deadline(kScenarioTimeoutMs)), spcclSuccess);
    EXPECT_EQ(verified, kSizes.size());
  }

  // Parent and child each listen and connect to the other, then run
  // parentBody / childBody with (sendComm, recvComm).
  void runPair(const std::function<void(void*, void*, int childPipe)>& parentBody,
               const std::function<int(void*, void*, int parentPipe)>& childBody) {
    PipePair pipes;
    void* parentListen = nullptr;
    char parentHandle[SPCCL_NET_HANDLE_MAXSIZE];
    ASSERT_EQ(net_->listen(0, parentHandle, &parentListen), spcclSuccess) << threadLastError();

    pid_t child = spawn([&]() -> int {
      Deadline deadline(kScenarioTimeoutMs);
      void* listenComm = nullptr;
      char handle[SPCCL_NET_HANDLE_MAXSIZE];
      CHILD_CHECK(net_->listen(0, handle, &listenComm) == spcclSuccess);
      CHILD_CHECK(writeBytes(pipes.toParent[1], handle, sizeof(handle)));
      char peerHandle[SPCCL_NET_HANDLE_MAXSIZE];
      CHILD_CHECK(readBytes(pipes.toChild[0], peerHandle, sizeof(peerHandle), deadline));
      void* sendComm = nullptr;
      void* recvComm = nullptr;
      CHILD_CHECK(net_->connect(0, peerHandle, &sendComm) == spcclSuccess);
      CHILD_CHECK(acceptOne(listenComm, &recvComm, deadline) == spcclSuccess);
      return childBody(sendComm, recvComm, pipes.toChild[0]);
    });
    ASSERT_GT(child, 0);

    Deadline deadline(kScenarioTimeoutMs);
    char childHandle[SPCCL_NET_HANDLE_MAXSIZE];
    ASSERT_TRUE(readBytes(pipes.toParent[0], childHandle, sizeof(childHandle), deadline));
    ASSERT_TRUE(writeBytes(pipes.toChild[1], parentHandle, sizeof(parentHandle)));
    void* sendComm = nullptr;
    void* recvComm = nullptr;
    ASSERT_EQ(net_->connect(0, childHandle, &sendComm), spcclSuccess) << threadLastError();
    ASSERT_EQ(acceptOne(parentListen, &recvComm, deadline), spcclSuccess) << threadLastError();
    char peer[128] = "";
    ASSERT_EQ(net_->describe(sendComm, peer, sizeof(peer)), spcclSuccess);
    EXPECT_GT(strlen(peer), 0u);

    parentBody(sendComm, recvComm, pipes.toChild[1]);
    char bye = 'b';
    writeBytes(pipes.toChild[1], &bye, 1);
    net_->closeSend(sendComm);
    net_->closeRecv(recvComm);
    net_->closeListen(parentListen);
    childStatus_ = waitChild(child, kScenarioTimeoutMs);
  }

  const spcclNet_t* net_ = nullptr;
  int childStatus_ = -2;
};

TEST_P(TransportLoopback, EchoesEverySizeWithSeveralRequestsOutstanding) {
  ShmReceiveStats before = shmReceiveStats();
  runPair([&](void* sendComm, void* recvComm, int) { echoParent(sendComm, recvComm); },
          [&](void* sendComm, void* recvComm, int) { return echoChild(sendComm, recvComm); });
  EXPECT_EQ(childStatus_, 0);

  if (std::string(GetParam().name) == "shm" || std::string(GetParam().name) == "cuda_ipc") {
    // The echoes this process received took both data paths.
    size_t inlineLimit = static_cast<size_t>(knobInt("SPCCL_SHM_INLINE_BYTES"));
    uint64_t small = 0;
    for (size_t size : kSizes) small += size <= inlineLimit;
    ShmReceiveStats after = shmReceiveStats();
    EXPECT_EQ(after.inlineMessages - before.inlineMessages, small);
    EXPECT_EQ(after.remoteReads - before.remoteReads, kSizes.size() - small);
    EXPECT_EQ(after.streamedFallback, before.streamedFallback);
  }
}

// A child that sends `size` bytes; it keeps progressing until the parent says bye.
int sendAndLinger(const spcclNet_t* net, void* sendComm, int parentPipe, size_t size) {
  std::vector<unsigned char> data = patterned(0, size);
  void* request = nullptr;
  CHILD_CHECK(net->isend(sendComm, data.data(), size, nullptr, &request) == spcclSuccess);
  Deadline deadline(kScenarioTimeoutMs);
  bool pending = true;
  while (!deadline.expired()) {
    if (pending) {
      int done = 0;
      size_t moved = 0;
      pending = net->test(request, &done, &moved) == spcclSuccess && !done;
    }
    pollfd pfd{parentPipe, POLLIN, 0};
    if (poll(&pfd, 1, 5) > 0) return 0;
  }
  return 1;
}

TEST_P(TransportLoopback, OversizeReceiveFailsWithRemoteError) {
  for (size_t size : {size_t{100}, size_t{1} << 20}) {  // shm: inline and remote descriptor
    runPair(
        [&](void*, void* recvComm, int) {
          std::vector<unsigned char> buffer(size - 1);
          void* request = nullptr;
          ASSERT_EQ(net_->irecv(recvComm, buffer.data(), buffer.size(), nullptr, &request),
                    spcclSuccess);
          spcclResult_t result = spcclSuccess;
          Pump pump(net_);
          pump.add(recvComm, request, [&](spcclResult_t res, size_t) { result = res; });
          ASSERT_EQ(pump.runUntilIdle(Deadline(10000)), spcclSuccess);
          EXPECT_EQ(result, spcclRemoteError);
          EXPECT_NE(threadLastError().find("oversize message from"), std::string::npos)
              << threadLastError();
          EXPECT_NE(threadLastError().find(std::to_string(size) + " bytes > capacity " +
                                           std::to_string(size - 1)),
                    std::string::npos)
              << threadLastError();
          // The comm stays failed: a later receive fails at once.
          void* later = nullptr;
          EXPECT_EQ(net_->irecv(recvComm, buffer.data(), buffer.size(), nullptr, &later),
                    spcclRemoteError);
        },
        [&](void* sendComm, void*, int parentPipe) {
          return sendAndLinger(net_, sendComm, parentPipe, size);
        });
    EXPECT_EQ(childStatus_, 0) << "size " << size;
  }
}

// describe() with no comm or no room refuses with an error naming the call
// (transports/common/stream_comm.h: describePeer).
TEST_P(TransportLoopback, DescribeRefusesNullArguments) {
  char where[64] = "";
  EXPECT_EQ(net_->describe(nullptr, where, sizeof(where)), spcclInvalidArgument);
  EXPECT_NE(threadLastError().find("describe: NULL argument"), std::string::npos)
      << threadLastError();
  void* listenComm = nullptr;
  char handle[SPCCL_NET_HANDLE_MAXSIZE];
  ASSERT_EQ(net_->listen(0, handle, &listenComm), spcclSuccess) << threadLastError();
  EXPECT_EQ(net_->describe(listenComm, nullptr, sizeof(where)), spcclInvalidArgument);
  EXPECT_EQ(net_->describe(listenComm, where, 0), spcclInvalidArgument);
  EXPECT_EQ(net_->describe(listenComm, where, sizeof(where)), spcclSuccess);
  EXPECT_GT(strlen(where), 0u) << "a listen comm describes its own address";
  net_->closeListen(listenComm);
}

TEST_P(TransportLoopback, PeerExitMidTransferFailsPendingReceives) {
  constexpr size_t kBig = 64u << 20;
  runPair(
      [&](void*, void* recvComm, int childPipe) {
        // One receive more than the child sends: it is certainly pending
        // when the child dies, whatever the transport managed before.
        std::vector<std::vector<unsigned char>> buffers(3, std::vector<unsigned char>(kBig));
        Pump pump(net_);
        std::vector<spcclResult_t> results;
        for (auto* buffer : {&buffers[0], &buffers[1], &buffers[2]}) {
          void* request = nullptr;
          ASSERT_EQ(net_->irecv(recvComm, buffer->data(), kBig, nullptr, &request), spcclSuccess);
          pump.add(recvComm, request, [&, buffer](spcclResult_t res, size_t size) {
            results.push_back(res);
            if (res == spcclSuccess) {
              EXPECT_EQ(size, kBig);
              EXPECT_TRUE(hasPattern(buffer->data(), 0, kBig));
            }
          });
        }
        pump.runFor(200);  // the transfer is under way (or a message already arrived)
        char die = 'd';
        ASSERT_TRUE(writeBytes(childPipe, &die, 1));
        Deadline failFast(5000);
        ASSERT_EQ(pump.runUntilIdle(failFast), spcclSuccess) << "pending receives hung";
        ASSERT_EQ(results.size(), 3u);
        EXPECT_EQ(results.back(), spcclRemoteError);
        char peer[128] = "";
        ASSERT_EQ(net_->describe(recvComm, peer, sizeof(peer)), spcclSuccess);
        EXPECT_NE(threadLastError().find(peer), std::string::npos)
            << "the error should name the peer " << peer << ": " << threadLastError();
      },
      [&](void* sendComm, void*, int parentPipe) -> int {
        // Two large messages; progress only the first (the transport may move
        // more meanwhile) until the parent says die, then vanish.
        std::vector<unsigned char> data = patterned(0, kBig);
        void* requests[2];
        for (void*& request : requests)
          CHILD_CHECK(net_->isend(sendComm, data.data(), kBig, nullptr, &request) == spcclSuccess);
        Deadline deadline(kScenarioTimeoutMs);
        bool firstPending = true;
        while (!deadline.expired()) {
          if (firstPending) {
            int done = 0;
            size_t size = 0;
            firstPending = net_->test(requests[0], &done, &size) == spcclSuccess && !done;
          }
          pollfd pfd{parentPipe, POLLIN, 0};
          if (poll(&pfd, 1, 1) > 0) _exit(0);
        }
        return 1;
      });
  EXPECT_EQ(childStatus_, 0);
}

// Large shm messages are read from the sender's memory (process_vm_readv).
class ShmTransportRemoteRead : public TransportLoopback {};

// When the receiver may not read the sender's memory (Yama, seccomp), the
// sender streams the refused message and sends later ones inline.
TEST_P(ShmTransportRemoteRead, RefusedLargeMessagesFallBackToStreaming) {
  ShmReceiveStats before = shmReceiveStats();
  runPair(
      [&](void* sendComm, void* recvComm, int) {
        shmRefuseRemoteReadsForTesting(true);  // this process only: the child is already forked
        echoParent(sendComm, recvComm);
        shmRefuseRemoteReadsForTesting(false);
      },
      [&](void* sendComm, void* recvComm, int) { return echoChild(sendComm, recvComm); });
  EXPECT_EQ(childStatus_, 0);
  ShmReceiveStats after = shmReceiveStats();
  EXPECT_EQ(after.remoteReads - before.remoteReads, 0u);
  EXPECT_EQ(after.streamedFallback - before.streamedFallback, 1u);
  EXPECT_EQ(after.inlineMessages - before.inlineMessages, kSizes.size() - 1);
}

// A sender that closes its connection before the receiver has answered
// has given the message up (runtime/engine: a failed call) and may reuse
// its buffer: what the receiver reads then must not be delivered.
TEST_P(ShmTransportRemoteRead, MessageGivenUpBeforeItWasReadIsRefused) {
  constexpr size_t kBig = (1u << 20) + 3;  // far above the inline limit: a remote descriptor
  runPair(
      [&](void*, void* recvComm, int) {
        // Wait until the child has closed its side (it sent the descriptor
        // first and overwrote its buffer after the close).
        int fd = -1;
        short events = 0;
        ASSERT_EQ(net_->pollFd(recvComm, &fd, &events), spcclSuccess);
        ASSERT_GE(fd, 0);
        pollfd pfd{fd, POLLRDHUP, 0};
        ASSERT_EQ(poll(&pfd, 1, 10000), 1) << "the child never closed its send side";
        std::vector<unsigned char> buffer(kBig, 0);
        void* request = nullptr;
        ASSERT_EQ(net_->irecv(recvComm, buffer.data(), kBig, nullptr, &request), spcclSuccess);
        Pump pump(net_);
        spcclResult_t result = spcclSuccess;
        pump.add(recvComm, request, [&](spcclResult_t res, size_t) { result = res; });
        ASSERT_EQ(pump.runUntilIdle(Deadline(5000)), spcclSuccess) << "the receive hung";
        EXPECT_EQ(result, spcclRemoteError)
            << "a message read after its sender gave it up was delivered; pattern intact: "
            << hasPattern(buffer.data(), 0, kBig);
        EXPECT_NE(threadLastError().find("gave up"), std::string::npos) << threadLastError();
      },
      [&](void* sendComm, void*, int parentPipe) -> int {
        std::vector<unsigned char> data = patterned(0, kBig);
        void* request = nullptr;
        CHILD_CHECK(net_->isend(sendComm, data.data(), kBig, nullptr, &request) == spcclSuccess);
        // Progress until the descriptor is out: the send cannot finish
        // without the parent's answer, which it gives only after the close.
        for (int i = 0; i < 20; ++i) {
          int done = 0;
          CHILD_CHECK(net_->test(request, &done, nullptr) == spcclSuccess && !done);
          usleep(5000);
        }
        CHILD_CHECK(net_->closeSend(sendComm) == spcclSuccess);
        std::fill(data.begin(), data.end(), 0xEE);  // the buffer reused
        // Alive (and the buffer mapped) until the parent is done reading.
        char bye = 0;
        CHILD_CHECK(readBytes(parentPipe, &bye, 1, Deadline(kScenarioTimeoutMs)));
        return 0;
      });
  EXPECT_EQ(childStatus_, 0);
}

// cuda_ipc is shm for host memory (transports/shm/shm_device.h): the same
// paths, the same fallback.
INSTANTIATE_TEST_SUITE_P(Shm, ShmTransportRemoteRead,
                         ::testing::Values(TransportCase{"shm", spcclNetShm},
                                           TransportCase{"cuda_ipc", spcclNetCudaIpc}),
                         [](const ::testing::TestParamInfo<TransportCase>& info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(BuiltIn, TransportLoopback,
                         ::testing::Values(TransportCase{"tcp", spcclNetTcp},
                                           TransportCase{"shm", spcclNetShm},
                                           TransportCase{"cuda_ipc", spcclNetCudaIpc}),
                         [](const ::testing::TestParamInfo<TransportCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace spccl::transport

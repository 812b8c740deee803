// The ucx plugin (libspccl-net-ucx.so) with real processes and real UCX,
// over UCX_TLS=tcp and UCX_TLS=sm: the ABI rules of include/spccl_net.h
// (order, sizes, oversize, zero bytes) and a peer killed mid-collective.
// Everything UCX runs in forked children: a UCX worker does not survive fork.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/killed_rank.h"
#include "../common/transport_param.h"
#include "base/check.h"
#include "core/transport_registry.h"
#include "spccl_net.h"

using namespace spccl::testing;

namespace {

#ifdef SPCCL_NET_UCX_PLUGIN
constexpr const char* kPlugin = SPCCL_NET_UCX_PLUGIN;
#else
constexpr const char* kPlugin = nullptr;
#endif

// Loaded by its full path, the plugin is then what the registry's
// dlopen("libspccl-net-ucx.so") finds (same SONAME).
bool preloadPlugin() { return dlopen(kPlugin, RTLD_NOW | RTLD_LOCAL) != nullptr; }

class UcxTransport : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (kPlugin == nullptr) GTEST_SKIP() << "UCX not found at configure time: no ucx plugin";
    setenv("UCX_TLS", GetParam(), 1);
    setenv("SPCCL_TRANSPORT", "ucx", 1);
  }
};

// Waits for a request with a deadline, polling the transport's fd as the engine does.
spcclResult_t waitFor(const spcclNet_v2_t* net, void* comm, void* request, size_t* size) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int done = 0;
    spcclResult_t res = net->test(request, &done, size);
    if (res != spcclSuccess || done) return res;
    int fd = -1;
    short events = 0;
    net->pollFd(comm, &fd, &events);
    pollfd p{fd, events, 0};
    if (fd >= 0) ::poll(&p, 1, 5);
  }
  return spcclTimeout;
}

#define CHILD_EXPECT(cond)                                                    \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      return kChildWrongResult;                                               \
    }                                                                         \
  } while (0)

// One process, a comm to itself: three messages arrive in order with their
// sizes (one empty), and a message larger than the posted buffer fails the
// receive with spcclRemoteError instead of being truncated.
int orderSizesAndOversize() {
  if (!preloadPlugin()) return kChildInitFailed;
  const spcclNet_v2_t* net = nullptr;
  if (spccl::getTransport("ucx", &net) != spcclSuccess) return kChildInitFailed;
  unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  // The ucx plugin is a version-1 table: the registry runs it with one device.
  int devices = 0;
  CHILD_EXPECT(net->devices(&devices) == spcclSuccess && devices == 1);
  CHILD_EXPECT(net->listen(1, handle, &listenComm) == spcclInvalidArgument);
  CHILD_EXPECT(spccl::threadLastError().find("device 1") != std::string::npos);
  void* mhandle = nullptr;
  char memory[16];
  CHILD_EXPECT(net->regMr(nullptr, memory, sizeof(memory), SPCCL_PTR_CUDA, &mhandle) ==
               spcclInvalidArgument);
  CHILD_EXPECT(net->regMrDmaBuf == nullptr);
  CHILD_EXPECT(net->listen(0, handle, &listenComm) == spcclSuccess);
  CHILD_EXPECT(net->connect(0, handle, &sendComm) == spcclSuccess);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (recvComm == nullptr && std::chrono::steady_clock::now() < deadline) {
    CHILD_EXPECT(net->accept(listenComm, &recvComm) == spcclSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHILD_EXPECT(recvComm != nullptr);

  std::vector<std::vector<char>> messages = {
      std::vector<char>(100, 'a'), {}, std::vector<char>(3 << 20, 'c')};
  std::vector<void*> sends;
  for (auto& m : messages) {
    void* request = nullptr;
    CHILD_EXPECT(net->isend(sendComm, m.data(), m.size(), nullptr, &request) == spcclSuccess);
    sends.push_back(request);
  }
  std::vector<char> inbox(4 << 20, 0);
  for (auto& m : messages) {
    void* request = nullptr;
    CHILD_EXPECT(net->irecv(recvComm, inbox.data(), inbox.size(), nullptr, &request) ==
                 spcclSuccess);
    size_t size = 12345;
    CHILD_EXPECT(waitFor(net, recvComm, request, &size) == spcclSuccess);
    CHILD_EXPECT(size == m.size());
    CHILD_EXPECT(m.empty() || std::memcmp(inbox.data(), m.data(), m.size()) == 0);
  }
  for (void* request : sends) {
    size_t size = 0;
    CHILD_EXPECT(waitFor(net, sendComm, request, &size) == spcclSuccess);
  }

  std::vector<char> big(1000, 'x');
  void* sendRequest = nullptr;
  void* recvRequest = nullptr;
  CHILD_EXPECT(net->isend(sendComm, big.data(), big.size(), nullptr, &sendRequest) == spcclSuccess);
  CHILD_EXPECT(net->irecv(recvComm, inbox.data(), 10, nullptr, &recvRequest) == spcclSuccess);
  size_t size = 0;
  CHILD_EXPECT(waitFor(net, recvComm, recvRequest, &size) == spcclRemoteError);
  char where[128] = "";
  CHILD_EXPECT(net->describe(recvComm, where, sizeof(where)) == spcclSuccess);
  CHILD_EXPECT(std::strchr(where, ':') != nullptr);
  net->closeSend(sendComm);
  net->closeRecv(recvComm);
  net->closeListen(listenComm);
  return kChildOk;
}

TEST_P(UcxTransport, MessagesInOrderWithSizesAndOversizeFails) {
  auto outcomes = forkRanks(1, [](int, const spcclUniqueId&) { return orderSizesAndOversize(); });
  EXPECT_TRUE(outcomes[0].exited);
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

// Rank 1 is SIGKILLed inside a large all-reduce; the others must fail with
// spcclRemoteError long before the 20 s deadline, saying what ucx saw
// (common/killed_rank.h).
TEST_P(UcxTransport, KilledRankMakesOthersFailFast) {
  const int n = 3;
  auto outcomes = forkRanks(
      n,
      [](int rank, const spcclUniqueId& id) {
        if (!preloadPlugin()) return kChildInitFailed;
        spcclComm_t comm = initOrExit(n, id, rank, 20000);
        // The plugin's own words reach the message (transport_registry_error_text.h).
        return allReduceUntilRankKilled(comm, rank, 4 << 20, "ucx: ");
      },
      60);
  expectSurvivorsFailedFast(outcomes);
}

INSTANTIATE_TEST_SUITE_P(UcxTls, UcxTransport, ::testing::Values("tcp", "sm"));

}  // namespace

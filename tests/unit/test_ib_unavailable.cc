// A transport the user names that cannot start is an error on every rank,
// with the plugin's reason; it never silently becomes tcp. Here: the ib
// plugin on a host without an RDMA device, named by SPCCL_TRANSPORT or by
// spcclConfig_t.transport. SPCCL_TRANSPORT=auto (shm and tcp) never loads
// a plugin, so it has nothing to fall back from.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "base/log.h"

using namespace spccl::testing;

namespace {

#ifdef SPCCL_NET_IB_PLUGIN
constexpr const char* kPlugin = SPCCL_NET_IB_PLUGIN;
#else
constexpr const char* kPlugin = nullptr;
#endif

constexpr int kRanks = 2;
constexpr double kFastSeconds = 5.0;
constexpr int kExitWrongError = 20;
constexpr int kExitTooSlow = 21;

bool rdmaDevicePresent() {
  DIR* dir = opendir("/sys/class/infiniband");
  if (dir == nullptr) return false;
  bool any = false;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') any = true;
  closedir(dir);
  return any;
}

#define SKIP_UNLESS_IB_PLUGIN_WITHOUT_DEVICE()                                             \
  do {                                                                                     \
    if (kPlugin == nullptr)                                                                \
      GTEST_SKIP() << "libibverbs not found at configure time: no ib plugin";              \
    if (rdmaDevicePresent()) GTEST_SKIP() << "an RDMA device exists here; ib would start"; \
  } while (0)

// Creates a communicator with the ib transport named by the environment or
// by the config; expects spcclSystemError at once, with `expected` in the
// message.
int expectIbRefused(int rank, const spcclUniqueId& id, bool throughConfig,
                    const std::string& expected) {
  // The registry opens the plugin by its plain name: load it by path first.
  if (dlopen(kPlugin, RTLD_NOW | RTLD_LOCAL) == nullptr) return kChildInitFailed;
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.timeoutMs = 30000;
  config.profileLinks = 0;
  if (throughConfig)
    config.transport = "ib";
  else
    setenv("SPCCL_TRANSPORT", "ib", 1);
  auto start = std::chrono::steady_clock::now();
  spcclComm_t comm = nullptr;
  spcclResult_t res = spcclCommInitRankConfig(&comm, kRanks, id, rank, &config);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string message = spcclGetLastError(nullptr);
  std::fprintf(stderr, "rank %d after %.2f s: %s: %s\n", rank, seconds, spcclGetErrorString(res),
               message.c_str());
  if (res == spcclSuccess) return kChildUnexpectedSuccess;
  if (res != spcclSystemError || message.find(expected) == std::string::npos)
    return kExitWrongError;
  return seconds < kFastSeconds ? kChildOk : kExitTooSlow;
}

TEST(IbPlugin, NamedWithoutDeviceFailsCreationOnEveryRankSayingWhy) {
  SKIP_UNLESS_IB_PLUGIN_WITHOUT_DEVICE();
  auto outcomes = forkRanks(kRanks, [](int rank, const spcclUniqueId& id) {
    return expectIbRefused(rank, id, false,
                           "SPCCL_TRANSPORT=ib: transport ib cannot start on this host: ib: no "
                           "RDMA device found");
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(outcomes[rank].exited) << "rank " << rank;
    EXPECT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
  }
}

TEST(IbPlugin, NamedThroughTheConfigSaysWhereItWasNamed) {
  SKIP_UNLESS_IB_PLUGIN_WITHOUT_DEVICE();
  auto outcomes = forkRanks(kRanks, [](int rank, const spcclUniqueId& id) {
    return expectIbRefused(rank, id, true,
                           "spcclConfig_t.transport=ib: transport ib cannot start on this host");
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(outcomes[rank].exited) << "rank " << rank;
    EXPECT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
  }
}

// auto is shm and tcp only: with the plugin loadable, nothing of ib is
// tried, and the job runs.
TEST(IbPlugin, AutoLoadsNoPluginAndRuns) {
  if (kPlugin == nullptr) GTEST_SKIP() << "libibverbs not found at configure time: no ib plugin";
  std::string dir = ::testing::TempDir() + "spccl_ib_auto_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  struct RemoveAtExit {
    const std::string& dir;
    ~RemoveAtExit() { std::filesystem::remove_all(dir); }
  } removeAtExit{dir};
  auto outcomes = forkRanks(kRanks, [&dir](int rank, const spcclUniqueId& id) {
    setenv("SPCCL_TRANSPORT", "auto", 1);
    setenv("SPCCL_DEBUG", "INFO", 1);
    setenv("SPCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    setenv("SPCCL_DEBUG_FILE", (dir + "/rank" + std::to_string(rank) + ".log").c_str(), 1);
    spccl::logReconfigure();  // earlier tests in this process may have read SPCCL_DEBUG*
    if (dlopen(kPlugin, RTLD_NOW | RTLD_LOCAL) == nullptr) return kChildInitFailed;
    spcclComm_t comm = initOrExit(kRanks, id, rank, 20000);
    float x = 1.0f;
    if (spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr) != spcclSuccess ||
        x != static_cast<float>(kRanks))
      return kChildWrongResult;
    return spcclCommDestroy(comm) == spcclSuccess ? kChildOk : kChildWrongResult;
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(outcomes[rank].exited) << "rank " << rank;
    ASSERT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
    std::stringstream text;
    text << std::ifstream(dir + "/rank" + std::to_string(rank) + ".log").rdbuf();
    EXPECT_NE(text.str().find("Init COMPLETE"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("ib:"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("libspccl-net-"), std::string::npos) << text.str();
  }
}

}  // namespace

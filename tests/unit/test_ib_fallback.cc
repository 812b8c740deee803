// SPCCL_TRANSPORT=ib on a host without an RDMA device: the plugin loads,
// says at INFO that no device exists, and the ranks fall back to tcp and
// still compute correct results.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

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

bool rdmaDevicePresent() {
  DIR* dir = opendir("/sys/class/infiniband");
  if (dir == nullptr) return false;
  bool any = false;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') any = true;
  closedir(dir);
  return any;
}

TEST(IbPlugin, WithoutDeviceSaysSoAndFallsBackToTcp) {
  if (kPlugin == nullptr) GTEST_SKIP() << "libibverbs not found at configure time: no ib plugin";
  if (rdmaDevicePresent())
    GTEST_SKIP() << "an RDMA device exists here; the fall-back does not apply";
  std::string log = ::testing::TempDir() + "spccl_ib_fallback_%p.log";
  // Set for the forked ranks only: later tests in this process (when the
  // whole binary runs in one process) must not inherit SPCCL_TRANSPORT=ib.
  struct UnsetAtExit {
    ~UnsetAtExit() {
      for (const char* name :
           {"SPCCL_TRANSPORT", "SPCCL_DEBUG", "SPCCL_DEBUG_SUBSYS", "SPCCL_DEBUG_FILE"})
        unsetenv(name);
    }
  } unsetAtExit;
  setenv("SPCCL_TRANSPORT", "ib", 1);
  setenv("SPCCL_DEBUG", "INFO", 1);
  setenv("SPCCL_DEBUG_SUBSYS", "NET", 1);
  setenv("SPCCL_DEBUG_FILE", log.c_str(), 1);
  const int n = 2;
  std::vector<int> pids(n, 0);
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spccl::logReconfigure();  // earlier tests in this process may have read SPCCL_DEBUG*
    if (dlopen(kPlugin, RTLD_NOW | RTLD_LOCAL) == nullptr) return kChildInitFailed;
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    std::vector<float> data(1000, static_cast<float>(rank + 1));
    if (spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm,
                       nullptr) != spcclSuccess)
      return kChildWrongResult;
    for (float v : data)
      if (v != 3.0f) return kChildWrongResult;
    spcclCommDestroy(comm);
    // The log file name carries the pid; tell the parent which one.
    std::ofstream(::testing::TempDir() + "spccl_ib_fallback_rank" + std::to_string(rank))
        << getpid();
    return kChildOk;
  });
  unsetenv("SPCCL_DEBUG_FILE");
  unsetenv("SPCCL_DEBUG");
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(outcomes[r].exited) << "rank " << r;
    ASSERT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
    std::string pid;
    std::ifstream(::testing::TempDir() + "spccl_ib_fallback_rank" + std::to_string(r)) >> pid;
    std::string path = log;
    path.replace(path.find("%p"), 2, pid);
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    EXPECT_NE(text.str().find("ib: no RDMA device found"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("transport ib is unavailable on this host; falling back to tcp"),
              std::string::npos)
        << text.str();
  }
}

}  // namespace

// What SPCCL_DEBUG=INFO prints (docs/observability.md): one Init COMPLETE
// line per rank with its transports per peer kind, rails and link model,
// one line with the algorithm tables on rank 0 (INIT), and one line per
// collective call with its bytes, algorithm and reason, time and bytes
// sent (COLL). At the default level nothing of it is printed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "base/log.h"

using namespace spccl::testing;

namespace {

constexpr int kRanks = 3;
constexpr int kRankOnOtherHost = 2;

// Runs three calls on 3 ranks: ranks 0 and 1 share a host id (shm), rank 2
// has its own (tcp). SPCCL_ALGO=ring forces the all-reduce; the broadcast
// is chosen by the cost model. Every rank logs to dir/rank<R>.log.
std::vector<RankOutcome> runJob(const std::string& dir, const std::string& level,
                                const std::string& subsystems) {
  return forkRanks(kRanks, [&](int rank, const spcclUniqueId& id) {
    setenv("SPCCL_TRANSPORT", "auto", 1);
    setenv("SPCCL_HOSTID", rank == kRankOnOtherHost ? "obs-host-b" : "obs-host-a", 1);
    setenv("SPCCL_ALGO", "ring", 1);
    if (level.empty())
      unsetenv("SPCCL_DEBUG");
    else
      setenv("SPCCL_DEBUG", level.c_str(), 1);
    setenv("SPCCL_DEBUG_SUBSYS", subsystems.c_str(), 1);
    setenv("SPCCL_DEBUG_FILE", (dir + "/rank" + std::to_string(rank) + ".log").c_str(), 1);
    spccl::logReconfigure();  // earlier tests in this process may have read SPCCL_DEBUG*
    spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
    config.timeoutMs = 20000;
    spcclComm_t comm = nullptr;
    if (spcclCommInitRankConfig(&comm, kRanks, id, rank, &config) != spcclSuccess)
      return kChildInitFailed;
    std::vector<float> sum(1000, 1.0f);
    std::vector<int32_t> broadcast(256, rank);
    std::vector<double> gathered(10 * kRanks);
    std::vector<double> mine(10, rank);
    if (spcclAllReduce(sum.data(), sum.data(), sum.size(), spcclFloat32, spcclSum, comm, nullptr) !=
            spcclSuccess ||
        spcclBroadcast(broadcast.data(), broadcast.data(), broadcast.size(), spcclInt32, 1, comm,
                       nullptr) != spcclSuccess ||
        spcclAllGather(mine.data(), gathered.data(), mine.size(), spcclFloat64, comm, nullptr) !=
            spcclSuccess)
      return kChildWrongResult;
    if (sum[0] != 3.0f || broadcast[0] != 1 || gathered[25] != 2.0) return kChildWrongResult;
    return spcclCommDestroy(comm) == spcclSuccess ? kChildOk : kChildWrongResult;
  });
}

// A fresh directory for the ranks' logs, removed with everything in it.
class TempDir {
 public:
  TempDir() : path_(::testing::TempDir() + "spccl_debug_lines_XXXXXX") {
    if (mkdtemp(path_.data()) == nullptr) path_.clear();
  }
  ~TempDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string readFile(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::vector<std::string> linesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(DebugLogLines, InitAndCollLinesCarryTheirFields) {
  const TempDir temp;
  const std::string& dir = temp.path();
  ASSERT_FALSE(dir.empty());
  auto outcomes = runJob(dir, "INFO", "INIT,COLL");
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(outcomes[rank].exited) << "rank " << rank;
    ASSERT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
  }
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string log = readFile(dir + "/rank" + std::to_string(rank) + ".log");
    SCOPED_TRACE("rank " + std::to_string(rank) + "'s log:\n" + log);

    const auto ready = linesWith(log, "Init COMPLETE");
    ASSERT_EQ(ready.size(), 1u);
    EXPECT_TRUE(contains(ready[0], " spccl INFO "));
    EXPECT_TRUE(contains(ready[0], "rank " + std::to_string(rank) + " nranks 3 host "));
    const std::string peers = rank == kRankOnOtherHost
                                  ? ": tcp to 2 peers (1 rail x 1 connection: "
                                  : ": shm to 1 peer, tcp to 1 peer (1 rail x 1 connection: ";
    EXPECT_TRUE(contains(ready[0], peers));
    EXPECT_TRUE(std::regex_search(ready[0], std::regex("; alpha [0-9.]+ us, [0-9.]+ GB/s "
                                                       "\\(measured\\)$")));

    const auto tables = linesWith(log, "dense algorithms");
    if (rank == 0) {
      ASSERT_EQ(tables.size(), 1u);
      EXPECT_TRUE(contains(tables[0], "nranks 3 on 2 hosts, transport auto"));
      EXPECT_TRUE(contains(tables[0],
                           "dense algorithms (SPCCL_ALGO=ring, else cost model): "
                           "AllReduce ring (SPCCL_ALGO), "));
      EXPECT_TRUE(contains(tables[0], "Broadcast binomial|pipelined_chain"));
      EXPECT_TRUE(contains(tables[0], "sparse algorithms (planner, per call): bp|hc|"));
    } else {
      EXPECT_TRUE(tables.empty());
    }

    // One COLL line per call, in call order; none for the library's own
    // exchanges (link profiling).
    const auto calls = linesWith(log, "call_log.cc");
    ASSERT_EQ(calls.size(), 3u);
    const std::string who = "rank " + std::to_string(rank) + " nranks 3: ";
    EXPECT_TRUE(contains(calls[0], "AllReduce #"));
    EXPECT_TRUE(contains(calls[0], who + "count 1000 float (4000 bytes) op sum; "
                                         "algorithm ring (forced by SPCCL_ALGO=ring); "));
    EXPECT_TRUE(contains(calls[1], "Broadcast #"));
    EXPECT_TRUE(std::regex_search(
        calls[1],
        std::regex(who + "count 256 int32 \\(1024 bytes\\) root 1; algorithm "
                         "(binomial|pipelined_chain) \\(cost model: \\w+ [0-9.]+ u?m?s vs "
                         "\\w+ [0-9.]+ u?m?s\\); ")));
    EXPECT_TRUE(contains(calls[2], "AllGather #"));
    EXPECT_TRUE(contains(calls[2], who + "count 10 double (80 bytes); algorithm ring (forced by "
                                         "SPCCL_ALGO=ring); "));
    // Every rank sends in an all-reduce and an all-gather.
    for (int c : {0, 2})
      EXPECT_TRUE(std::regex_search(calls[c], std::regex("[0-9.]+ u?m?s, sent [1-9][0-9]* bytes$")))
          << calls[c];
  }
}

TEST(DebugLogLines, DefaultLevelPrintsNone) {
  const TempDir temp;
  const std::string& dir = temp.path();
  ASSERT_FALSE(dir.empty());
  auto outcomes = runJob(dir, "", "INIT,COLL");
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(outcomes[rank].exited) << "rank " << rank;
    ASSERT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
    const std::string log = readFile(dir + "/rank" + std::to_string(rank) + ".log");
    EXPECT_EQ(log, "") << "rank " << rank;
  }
}

TEST(DebugLogLines, OtherSubsystemsLeaveInitAndCollOut) {
  const TempDir temp;
  const std::string& dir = temp.path();
  ASSERT_FALSE(dir.empty());
  auto outcomes = runJob(dir, "INFO", "NET");
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(outcomes[rank].exited) << "rank " << rank;
    ASSERT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
    const std::string log = readFile(dir + "/rank" + std::to_string(rank) + ".log");
    EXPECT_FALSE(log.empty()) << "rank " << rank;  // the NET lines
    EXPECT_FALSE(contains(log, "Init COMPLETE")) << log;
    EXPECT_TRUE(linesWith(log, "call_log.cc").empty()) << log;
  }
}

}  // namespace

// Rooted calls whose ranks pass different roots (src/coll/root_agreement.h):
// with real processes over every transport, every rank must fail with
// spcclInvalidUsage naming the argument and the values within a few
// seconds, never hang until the deadline or return success on some rank.
// Also: agreeing roots give the right data with SPCCL_CHECK_ROOTS on and
// off, and a communicator whose ranks disagreed stays usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/scoped_env.h"
#include "../common/transport_param.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// Short enough that a regression (a hang) fails the test in seconds;
// longer than kFailFastSeconds so that such a hang reads as too slow.
constexpr int kTimeoutMs = 8000;
constexpr double kFailFastSeconds = 5.0;
constexpr size_t kCount = 1024;  // elements per rank (per block for scatter/gather)

// Buffers big enough for every call on every rank: scatter's and gather's
// root side hold nranks blocks.
struct Buffers {
  std::vector<float> send, recv;
  Buffers(int nranks, float value)
      : send(kCount * static_cast<size_t>(nranks), value), recv(send.size(), -1.0f) {}
};

struct RootedCall {
  const char* name;
  const char* argument;  // how the API names the root
  spcclResult_t (*run)(spcclComm_t comm, int root, Buffers& b);
};

const RootedCall kRootedCalls[] = {
    {"MigrateBroadcast", "straggler",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclMigrateBroadcast(b.send.data(), kCount, spcclFloat32, root, comm, nullptr);
     }},
    {"MigrateReduce", "dest",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclMigrateReduce(b.send.data(), b.recv.data(), kCount, spcclFloat32, spcclSum, root,
                                 comm, nullptr);
     }},
    {"Scatter", "root",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclScatter(b.send.data(), b.recv.data(), kCount, spcclFloat32, root, comm, nullptr);
     }},
    {"Gather", "root",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclGather(b.send.data(), b.recv.data(), kCount, spcclFloat32, root, comm, nullptr);
     }},
    {"Broadcast", "root",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclBroadcast(b.send.data(), b.recv.data(), kCount, spcclFloat32, root, comm,
                             nullptr);
     }},
    {"Reduce", "root",
     [](spcclComm_t comm, int root, Buffers& b) {
       return spcclReduce(b.send.data(), b.recv.data(), kCount, spcclFloat32, spcclSum, root, comm,
                          nullptr);
     }},
};

// Which root each rank passes.
struct RootPattern {
  const char* name;
  int (*rootOf)(int rank, int nranks);
};

const RootPattern kPatterns[] = {
    // The two halves name different roots (rank 0 says 1, rank n-1 says n-1).
    {"Halves", [](int rank, int n) { return rank < n / 2 ? 1 : n - 1; }},
    // Only the last rank disagrees, naming rank 0 while the others name 1.
    {"LastRankDisagrees", [](int rank, int n) { return rank == n - 1 ? 0 : 1; }},
    // Only rank 2 disagrees, naming itself: it alone thinks it is the root.
    {"RankTwoNamesItself", [](int rank, int) { return rank == 2 ? 2 : 0; }},
    // Every rank names itself.
    {"EveryRankItself", [](int rank, int) { return rank; }},
};

std::string transportName(const char* transport) { return transport; }

// ---- disagreeing roots ----

using DisagreementCase = std::tuple<const char*, RootedCall, RootPattern, int>;

class RootDisagreement : public ::testing::TestWithParam<DisagreementCase> {};

TEST_P(RootDisagreement, EveryRankFailsFastNamingTheValues) {
  const auto& [transport, call, pattern, n] = GetParam();
  ScopedEnv useTransport("SPCCL_TRANSPORT", transport);
  int lowest = n, highest = -1;
  for (int r = 0; r < n; ++r) {
    lowest = std::min(lowest, pattern.rootOf(r, n));
    highest = std::max(highest, pattern.rootOf(r, n));
  }
  const std::string lowText = std::string(call.argument) + "=" + std::to_string(lowest);
  const std::string highText = std::string(call.argument) + "=" + std::to_string(highest);
  auto outcomes = forkRanks(
      n,
      [&](int rank, const spcclUniqueId& id) {
        spcclComm_t comm = initOrExit(n, id, rank, kTimeoutMs);
        Buffers buffers(n, static_cast<float>(rank + 1));
        const auto start = std::chrono::steady_clock::now();
        const spcclResult_t res = call.run(comm, pattern.rootOf(rank, n), buffers);
        const double seconds = secondsSince(start);
        const std::string message = spcclGetLastError(comm);
        std::fprintf(stderr, "[%s %s n=%d] rank %d passed %s=%d: %s after %.3f s: %s\n", call.name,
                     pattern.name, n, rank, call.argument, pattern.rootOf(rank, n),
                     spcclGetErrorString(res), seconds, res == spcclSuccess ? "" : message.c_str());
        if (res == spcclSuccess) return kChildUnexpectedSuccess;
        if (seconds > kFailFastSeconds) return kChildTooSlow;
        if (res != spcclInvalidUsage) return kChildWrongResult;
        if (message.find(lowText) == std::string::npos ||
            message.find(highText) == std::string::npos)
          return kChildWrongResult;
        spcclCommDestroy(comm);
        return kChildOk;
      },
      30);
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r << " did not exit";
    EXPECT_EQ(outcomes[r].status, kChildOk)
        << "rank " << r << " (" << kChildUnexpectedSuccess << ": returned success, "
        << kChildTooSlow << ": too slow, " << kChildWrongResult << ": wrong code or message)";
  }
}

std::string disagreementName(const ::testing::TestParamInfo<DisagreementCase>& info) {
  const auto& [transport, call, pattern, n] = info.param;
  return transportName(transport) + "_" + call.name + "_" + pattern.name + "_n" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(Calls, RootDisagreement,
                         ::testing::Combine(::testing::Values("tcp", "shm"),
                                            ::testing::ValuesIn(kRootedCalls),
                                            ::testing::ValuesIn(kPatterns),
                                            ::testing::Values(3, 4)),
                         disagreementName);

// ---- agreeing roots, and the communicator after a disagreement ----

// What rank `rank` must hold after `call` with every rank passing `root`
// and rank r's send buffer filled with r + 1. Empty: nothing to check.
std::vector<float> expectedResult(const std::string& call, int rank, int root, int n) {
  float sum = 0;
  for (int r = 0; r < n; ++r) sum += static_cast<float>(r + 1);
  const float rootValue = static_cast<float>(root + 1);
  if (call == "MigrateBroadcast") return std::vector<float>(kCount, rootValue);  // in place
  if (call == "Broadcast") return std::vector<float>(kCount, rootValue);
  if (call == "Scatter") return std::vector<float>(kCount, rootValue);
  if (rank != root) return {};
  if (call == "MigrateReduce" || call == "Reduce") return std::vector<float>(kCount, sum);
  if (call == "Gather") {
    std::vector<float> all;
    for (int r = 0; r < n; ++r) all.insert(all.end(), kCount, static_cast<float>(r + 1));
    return all;
  }
  return {};
}

// Runs `call` with every rank passing `root` and checks the data.
bool agreeingCallWorks(spcclComm_t comm, const RootedCall& call, int rank, int root, int n) {
  Buffers buffers(n, static_cast<float>(rank + 1));
  const spcclResult_t res = call.run(comm, root, buffers);
  if (res != spcclSuccess) {
    std::fprintf(stderr, "rank %d: %s with %s=%d failed: %s\n", rank, call.name, call.argument,
                 root, spcclGetLastError(comm));
    return false;
  }
  const std::string name = call.name;
  const std::vector<float> expected = expectedResult(name, rank, root, n);
  if (expected.empty()) return true;
  const std::vector<float>& held = name == "MigrateBroadcast" ? buffers.send : buffers.recv;
  if (!std::equal(expected.begin(), expected.end(), held.begin())) {
    std::fprintf(stderr, "rank %d: %s with %s=%d gave wrong data\n", rank, call.name, call.argument,
                 root);
    return false;
  }
  return true;
}

// The merged migration all-reduce has no root; it must keep working
// beside the rooted calls (rank r folds r + 1 into element r).
bool mergedAllReduceWorks(spcclComm_t comm, int rank, int n) {
  std::vector<float> send(kCount, 1.0f), recv(kCount, -1.0f);
  const float migrated = static_cast<float>(rank + 1);
  if (spcclMigrateAllReduce(send.data(), recv.data(), kCount, &migrated, 1,
                            static_cast<size_t>(rank), spcclFloat32, spcclSum, comm,
                            nullptr) != spcclSuccess) {
    std::fprintf(stderr, "rank %d: spcclMigrateAllReduce failed: %s\n", rank,
                 spcclGetLastError(comm));
    return false;
  }
  for (size_t i = 0; i < kCount; ++i) {
    const float expected = static_cast<float>(n) + (i < static_cast<size_t>(n) ? i + 1.0f : 0.0f);
    if (recv[i] != expected) {
      std::fprintf(stderr, "rank %d: spcclMigrateAllReduce element %zu is %g, expected %g\n", rank,
                   i, recv[i], expected);
      return false;
    }
  }
  return true;
}

// The messages a gather's root sends: none but the agreement's, one per
// dissemination round, so they tell whether SPCCL_CHECK_ROOTS took effect.
bool gatherRootSends(spcclComm_t comm, int rank, int n, uint64_t expectedMessages) {
  Buffers buffers(n, static_cast<float>(rank + 1));
  spcclCounters_t before{}, after{};
  spcclCommGetCounters(comm, &before);
  if (spcclGather(buffers.send.data(), buffers.recv.data(), kCount, spcclFloat32, 0, comm,
                  nullptr) != spcclSuccess)
    return false;
  spcclCommGetCounters(comm, &after);
  if (rank != 0) return true;
  const uint64_t sent = after.messagesSent - before.messagesSent;
  if (sent == expectedMessages) return true;
  std::fprintf(stderr, "gather root sent %llu messages, expected %llu\n",
               static_cast<unsigned long long>(sent),
               static_cast<unsigned long long>(expectedMessages));
  return false;
}

uint64_t disseminationRounds(int n) {
  uint64_t rounds = 0;
  for (int distance = 1; distance < n; distance *= 2) ++rounds;
  return rounds;
}

using AgreementCase = std::tuple<const char*, const char*>;  // transport, SPCCL_CHECK_ROOTS

class RootAgreement : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(RootAgreement, AgreeingRootsGiveTheRightData) {
  const auto& [transport, checkRoots] = GetParam();
  ScopedEnv useTransport("SPCCL_TRANSPORT", transport);
  ScopedEnv check("SPCCL_CHECK_ROOTS", checkRoots);
  const bool checking = std::string(checkRoots) == "1";
  for (int n : {3, 4}) {
    auto outcomes = forkRanks(
        n,
        [n, checking](int rank, const spcclUniqueId& id) {
          spcclComm_t comm = initOrExit(n, id, rank, kTimeoutMs);
          bool ok = true;
          for (int root = 0; root < n; ++root)
            for (const RootedCall& call : kRootedCalls)
              ok &= agreeingCallWorks(comm, call, rank, root, n);
          ok &= mergedAllReduceWorks(comm, rank, n);
          ok &= gatherRootSends(comm, rank, n, checking ? disseminationRounds(n) : 0);
          spcclCommDestroy(comm);
          return ok ? kChildOk : kChildWrongResult;
        },
        60);
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r << " of " << n;
  }
}

// A disagreement is found before any data moves and by every rank at
// once, so the communicator is not broken: the next call works.
class AfterRootDisagreement : public ::testing::TestWithParam<const char*> {};

TEST_P(AfterRootDisagreement, CommunicatorStaysUsable) {
  ScopedEnv useTransport("SPCCL_TRANSPORT", GetParam());
  const int n = 4;
  auto outcomes = forkRanks(
      n,
      [](int rank, const spcclUniqueId& id) {
        spcclComm_t comm = initOrExit(n, id, rank, kTimeoutMs);
        bool ok = true;
        for (const RootedCall& call : kRootedCalls) {
          Buffers buffers(n, static_cast<float>(rank + 1));
          if (call.run(comm, rank == 1 ? 3 : 1, buffers) != spcclInvalidUsage) {
            std::fprintf(stderr, "rank %d: %s with disagreeing roots did not fail as expected\n",
                         rank, call.name);
            ok = false;
          }
          ok &= agreeingCallWorks(comm, call, rank, 2, n);
        }
        spcclCommDestroy(comm);
        return ok ? kChildOk : kChildWrongResult;
      },
      60);
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

std::string agreementName(const ::testing::TestParamInfo<AgreementCase>& info) {
  const auto& [transport, checkRoots] = info.param;
  return transportName(transport) + "_checkRoots" + checkRoots;
}

INSTANTIATE_TEST_SUITE_P(Transports, RootAgreement,
                         ::testing::Combine(::testing::Values("tcp", "shm"),
                                            ::testing::Values("1", "0")),
                         agreementName);
INSTANTIATE_TEST_SUITE_P(Transports, AfterRootDisagreement, ::testing::Values("tcp", "shm"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return transportName(info.param);
                         });

}  // namespace

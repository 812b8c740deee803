// Life after a failure (docs/fault-tolerance.md), with real processes:
// spcclCommRevoke reaches every rank's pending and later calls;
// spcclCommAgree agrees on a flag and on the failed ranks, with and
// without a dead rank; spcclCommShrink builds a working communicator of
// the survivors after a SIGKILL (of rank 0 too), without a live excluded
// rank, and after a SIGSTOP, and the stopped rank, resumed, never
// disturbs it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/transport_param.h"
#include "base/socket.h"
#include "core/comm.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

constexpr int kTimeoutMs = 2000;  // the communicator's: a stopped rank costs this much

class Shrink : public TransportParamTest {};

// An all-reduce whose result is checked: each rank contributes
// (its rank in `comm` + 1) in every element.
bool checkedAllReduce(spcclComm_t comm, const char* what) {
  int rank = -1, n = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &n);
  std::vector<float> data(1 << 16, static_cast<float>(rank + 1));
  spcclResult_t res =
      spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm, nullptr);
  if (res != spcclSuccess) {
    std::fprintf(stderr, "%s: rank %d: all-reduce failed: %s\n", what, rank,
                 spcclGetLastError(comm));
    return false;
  }
  const float expected = static_cast<float>(n * (n + 1) / 2);
  for (float v : data)
    if (v != expected) {
      std::fprintf(stderr, "%s: rank %d: all-reduce gave %g, expected %g\n", what, rank, v,
                   expected);
      return false;
    }
  return true;
}

std::vector<int> failedRanks(spcclComm_t comm) {
  int count = 0;
  spcclCommGetFailedRanks(comm, nullptr, 0, &count);
  std::vector<int> failed(count);
  spcclCommGetFailedRanks(comm, failed.data(), count, &count);
  return failed;
}

// Rank 0 revokes while ranks 1 and 2 wait in an all-reduce that rank 0
// never joins, and rank 3 is between calls: all four get spcclRevoked, the
// waiting ones within a second (the deadline is 20 s).
TEST_P(Shrink, RevokeReachesPendingAndLaterCalls) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    if (!checkedAllReduce(comm, "before the revoke")) return kChildWrongResult;
    std::vector<float> data(1 << 16, 1.0f);
    auto allReduce = [&] {
      return spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm,
                            nullptr);
    };
    constexpr int kRevokeAtMs = 500;
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kRevokeAtMs));
      if (spcclCommRevoke(comm) != spcclSuccess) return kChildWrongResult;
      if (spcclCommRevoke(comm) != spcclSuccess) return kChildWrongResult;  // idempotent
    } else if (rank == 3) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kRevokeAtMs + 500));
    } else {
      auto start = std::chrono::steady_clock::now();
      spcclResult_t res = allReduce();
      double ms = secondsSince(start) * 1000;
      std::fprintf(stderr,
                   "rank %d: pending all-reduce returned %s after %.0f ms (revoke at %d ms): %s\n",
                   rank, spcclGetErrorString(res), ms, kRevokeAtMs, spcclGetLastError(comm));
      if (res != spcclRevoked) return kChildWrongResult;
      if (ms > kRevokeAtMs + 1000) return kChildTooSlow;
    }
    spcclResult_t later = allReduce();
    std::fprintf(stderr, "rank %d: later all-reduce: %s: %s\n", rank, spcclGetErrorString(later),
                 spcclGetLastError(comm));
    if (later != spcclRevoked) return kChildWrongResult;
    int flag = 0;
    spcclResult_t barrier = spcclBarrier(comm, nullptr);
    if (barrier != spcclRevoked) return kChildWrongResult;
    // Agreement still works on a revoked communicator.
    flag = 1;
    if (spcclCommAgree(comm, &flag) != spcclSuccess || flag != 1) return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r;
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  }
}

// The revoker cannot send Abort frames: its own engine is busy in a
// receive on another thread. Every pending call, its own included, still
// ends with spcclRevoked within a second, through the fault service's relay
// (the deadline is 20 s).
TEST_P(Shrink, RevokeFromABusyRankReachesPendingCallsThroughTheRelay) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    if (!checkedAllReduce(comm, "before the revoke")) return kChildWrongResult;
    constexpr int kRevokeAtMs = 500;
    std::vector<float> data(1024);
    spcclResult_t pending = spcclSuccess;
    double pendingMs = 0;
    // Receives that nobody sends: each rank from the next one.
    std::thread receiver([&] {
      auto start = std::chrono::steady_clock::now();
      pending = spcclRecv(data.data(), data.size(), spcclFloat32, (rank + 1) % n, comm, nullptr);
      pendingMs = secondsSince(start) * 1000;
    });
    if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kRevokeAtMs));
      if (spcclCommRevoke(comm) != spcclSuccess) return kChildWrongResult;
    }
    receiver.join();
    std::fprintf(stderr,
                 "rank %d: pending receive returned %s after %.0f ms (revoke at %d ms): %s\n", rank,
                 spcclGetErrorString(pending), pendingMs, kRevokeAtMs, spcclGetLastError(comm));
    if (pending != spcclRevoked) return kChildWrongResult;
    if (pendingMs > kRevokeAtMs + 1000) return kChildTooSlow;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Every rank alive: the flag is the AND of every rank's, no rank failed.
TEST_P(Shrink, AgreeWithEveryRankAlive) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    for (int round = 0; round < 3; ++round) {
      int flag = 0xff & ~(1 << rank);  // the AND clears bits 0..3
      if (round == 1 && rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (spcclCommAgree(comm, &flag) != spcclSuccess) {
        std::fprintf(stderr, "rank %d: agree failed: %s\n", rank, spcclGetLastError(comm));
        return kChildWrongResult;
      }
      if (flag != 0xf0 || !failedRanks(comm).empty()) {
        std::fprintf(stderr, "rank %d: agreed flag %#x, %zu failed\n", rank, flag,
                     failedRanks(comm).size());
        return kChildWrongResult;
      }
    }
    if (!checkedAllReduce(comm, "after agreeing")) return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// 300 idle and 100 random-byte connections held open at rank 1's fault
// service (the coordinator's queries and the decision go there) cost the
// agreement nothing: the service reads every connection at once.
TEST_P(Shrink, AgreeWhileIdleConnectionsFloodTheFaultService) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    std::vector<int> flood;
    if (rank == 2) {
      const spccl::net::SockAddr& target = comm->ranks[1].faultAddr;
      for (int i = 0; i < 400; ++i) {
        int fd = socket(target.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, &target.sa, spccl::net::sockAddrLen(target)) != 0) break;
        if (i % 4 == 3) {
          std::vector<unsigned char> junk(1000, static_cast<unsigned char>(i));
          (void)!write(fd, junk.data(), junk.size());
        }
        flood.push_back(fd);
      }
      std::fprintf(stderr, "rank 2: holds %zu connections to rank 1's fault service\n",
                   flood.size());
      if (flood.size() < 400) return kChildWrongResult;
    }
    if (!checkedAllReduce(comm, "with the flood in place")) return kChildWrongResult;
    auto start = std::chrono::steady_clock::now();
    int flag = 1;
    spcclResult_t res = spcclCommAgree(comm, &flag);
    double ms = secondsSince(start) * 1000;
    std::fprintf(stderr, "rank %d: agreement under the flood: %s in %.0f ms\n", rank,
                 spcclGetErrorString(res), ms);
    if (res != spcclSuccess || flag != 1 || !failedRanks(comm).empty()) return kChildWrongResult;
    if (ms > 1000) return kChildTooSlow;
    if (!checkedAllReduce(comm, "after the agreement")) return kChildWrongResult;
    for (int fd : flood) close(fd);
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// A rank SIGKILLed before the call (the first coordinator, rank 0, or a
// middle one): the survivors agree on the same failed set, {victim}.
TEST_P(Shrink, AgreeAfterSigkill) {
  const int n = 4;
  for (int victim : {0, 2}) {
    auto outcomes = forkRanks(n, [victim](int rank, const spcclUniqueId& id) {
      spcclComm_t comm = initOrExit(n, id, rank, 20000);
      if (!checkedAllReduce(comm, "before the kill")) return kChildWrongResult;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (rank == victim) kill(getpid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      auto start = std::chrono::steady_clock::now();
      int flag = 1;
      spcclResult_t res = spcclCommAgree(comm, &flag);
      std::vector<int> failed = failedRanks(comm);
      std::fprintf(stderr, "rank %d: agree: %s after %.0f ms, flag %d, failed {%s}\n", rank,
                   spcclGetErrorString(res), secondsSince(start) * 1000, flag,
                   failed.empty() ? "" : std::to_string(failed[0]).c_str());
      if (res != spcclSuccess || flag != 1 || failed != std::vector<int>{victim})
        return kChildWrongResult;
      return kChildOk;
    });
    for (int r = 0; r < n; ++r) {
      if (r == victim) continue;
      EXPECT_EQ(outcomes[r].status, kChildOk) << "victim " << victim << ", rank " << r;
    }
  }
}

// The survivors' path after a SIGKILL: the error, revoke, agree, shrink,
// then a verified all-reduce on the new communicator, at n = 3 and 4, with
// rank 0 (the old rendezvous root and first coordinator) or a middle rank
// killed.
TEST_P(Shrink, ShrinkAfterSigkill) {
  for (int n : {3, 4}) {
    for (int victim : {0, n / 2}) {
      auto outcomes = forkRanks(n, [n, victim](int rank, const spcclUniqueId& id) {
        spcclComm_t comm = initOrExit(n, id, rank, 20000);
        if (!checkedAllReduce(comm, "before the kill")) return kChildWrongResult;
        if (rank == victim) {
          // Not at once: its last messages of that all-reduce must arrive.
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          kill(getpid(), SIGKILL);
        }
        std::vector<float> data(1 << 16, 1.0f);
        spcclResult_t res = spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32,
                                           spcclSum, comm, nullptr);
        if (res == spcclSuccess) return kChildUnexpectedSuccess;
        spcclCommRevoke(comm);
        int flag = 1;
        if (spcclCommAgree(comm, &flag) != spcclSuccess) {
          std::fprintf(stderr, "rank %d: agree failed: %s\n", rank, spcclGetLastError(comm));
          return kChildWrongResult;
        }
        std::vector<int> failed = failedRanks(comm);
        if (failed != std::vector<int>{victim}) return kChildWrongResult;
        spcclComm_t shrunk = nullptr;
        auto start = std::chrono::steady_clock::now();
        if (spcclCommShrink(comm, failed.data(), static_cast<int>(failed.size()), nullptr,
                            &shrunk) != spcclSuccess) {
          std::fprintf(stderr, "rank %d: shrink failed: %s\n", rank, spcclGetLastError(comm));
          return kChildWrongResult;
        }
        int newRank = -1, newCount = 0;
        spcclCommUserRank(shrunk, &newRank);
        spcclCommCount(shrunk, &newCount);
        std::fprintf(stderr, "n=%d victim %d: rank %d is rank %d of %d after %.0f ms\n", n, victim,
                     rank, newRank, newCount, secondsSince(start) * 1000);
        if (newCount != n - 1 || newRank != (rank < victim ? rank : rank - 1))
          return kChildWrongResult;
        for (int i = 0; i < 3; ++i)
          if (!checkedAllReduce(shrunk, "after the shrink")) return kChildWrongResult;
        spcclCommDestroy(shrunk);
        spcclCommDestroy(comm);
        return kChildOk;
      });
      for (int r = 0; r < n; ++r) {
        if (r == victim) continue;
        EXPECT_EQ(outcomes[r].status, kChildOk)
            << "n " << n << ", victim " << victim << ", rank " << r;
      }
    }
  }
}

// Rank 1 is alive but excluded: the others shrink without it; rank 1's own
// call to shrink fails, naming the reason.
TEST_P(Shrink, ShrinkExcludingALiveRank) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    const int exclude[] = {1};
    spcclComm_t shrunk = nullptr;
    spcclResult_t res = spcclCommShrink(comm, exclude, 1, nullptr, &shrunk);
    if (rank == 1) {
      std::fprintf(stderr, "rank 1 (excluded): %s: %s\n", spcclGetErrorString(res),
                   spcclGetLastError(comm));
      if (res != spcclInvalidArgument || shrunk != nullptr) return kChildWrongResult;
      // The old communicator stays usable for nothing collective, but is
      // intact: destroying it is fine.
      spcclCommDestroy(comm);
      return kChildOk;
    }
    if (res != spcclSuccess) {
      std::fprintf(stderr, "rank %d: shrink failed: %s\n", rank, spcclGetLastError(comm));
      return kChildWrongResult;
    }
    if (!checkedAllReduce(shrunk, "without rank 1")) return kChildWrongResult;
    spcclCommDestroy(shrunk);
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Rank 1 stops (SIGSTOP): the others time out, revoke, agree that it
// failed, shrink and go on. Then rank 0 resumes it (SIGCONT): its calls on
// the old communicator fail, and the shrunk communicator keeps working.
TEST_P(Shrink, StoppedRankIsShrunkAwayAndHarmlessWhenResumed) {
  const int n = 4;
  auto* pids = static_cast<pid_t*>(
      mmap(nullptr, sizeof(pid_t) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pids, MAP_FAILED);
  auto outcomes = forkRanks(n, [pids](int rank, const spcclUniqueId& id) {
    pids[rank] = getpid();
    spcclComm_t comm = initOrExit(n, id, rank, kTimeoutMs);
    if (!checkedAllReduce(comm, "before the stop")) return kChildWrongResult;
    std::vector<float> data(1 << 16, 1.0f);
    if (rank == 1) {
      kill(getpid(), SIGSTOP);
      // Resumed: every call on the old communicator fails.
      auto start = std::chrono::steady_clock::now();
      spcclResult_t res = spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32,
                                         spcclSum, comm, nullptr);
      std::fprintf(stderr, "rank 1, resumed: all-reduce: %s after %.0f ms: %s\n",
                   spcclGetErrorString(res), secondsSince(start) * 1000, spcclGetLastError(comm));
      if (res == spcclSuccess) return kChildUnexpectedSuccess;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      res = spcclBarrier(comm, nullptr);
      std::fprintf(stderr, "rank 1, resumed: barrier: %s\n", spcclGetErrorString(res));
      if (res != spcclRevoked) return kChildWrongResult;
      spcclCommDestroy(comm);
      return kChildOk;
    }
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32,
                                       spcclSum, comm, nullptr);
    std::fprintf(stderr, "rank %d: all-reduce with rank 1 stopped: %s after %.0f ms\n", rank,
                 spcclGetErrorString(res), secondsSince(start) * 1000);
    if (res == spcclSuccess) return kChildUnexpectedSuccess;
    spcclCommRevoke(comm);
    int flag = 1;
    start = std::chrono::steady_clock::now();
    if (spcclCommAgree(comm, &flag) != spcclSuccess) {
      std::fprintf(stderr, "rank %d: agree failed: %s\n", rank, spcclGetLastError(comm));
      return kChildWrongResult;
    }
    std::vector<int> failed = failedRanks(comm);
    std::fprintf(stderr, "rank %d: agreed in %.0f ms, %zu failed\n", rank,
                 secondsSince(start) * 1000, failed.size());
    if (failed != std::vector<int>{1}) return kChildWrongResult;
    spcclComm_t shrunk = nullptr;
    if (spcclCommShrink(comm, failed.data(), 1, nullptr, &shrunk) != spcclSuccess) {
      std::fprintf(stderr, "rank %d: shrink failed: %s\n", rank, spcclGetLastError(comm));
      return kChildWrongResult;
    }
    if (!checkedAllReduce(shrunk, "after the shrink")) return kChildWrongResult;
    if (rank == 0) kill(pids[1], SIGCONT);
    // Rank 1 runs again for a while: the shrunk communicator must not notice.
    for (int i = 0; i < 15; ++i) {
      if (!checkedAllReduce(shrunk, "with rank 1 resumed")) return kChildWrongResult;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    spcclCommDestroy(shrunk);
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  munmap(pids, sizeof(pid_t) * n);
}

INSTANTIATE_TEST_SUITE_P(Transports, Shrink, ::testing::Values("tcp", "shm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace

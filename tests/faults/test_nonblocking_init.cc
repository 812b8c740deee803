// Non-blocking communicator creation and spcclCommFinalize (NCCL 2.27's
// contract; core/comm_init.h, docs/fault-tolerance.md), with real
// processes: creation that polls to success and then reduces, a rank that
// never comes, an abort while the creation waits, a finalize that
// completes outstanding requests, and the calls' bad arguments.
#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/transport_param.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

class NonBlockingInit : public TransportParamTest {};  // tcp, shm (common/transport_param.h)

spcclConfig_t nonBlockingConfig(int timeoutMs) {
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  config.profileLinks = 0;
  config.blocking = 0;
  return config;
}

// Polls spcclCommGetAsyncError until it is no longer spcclInProgress or
// deadlineMs passed (then spcclInProgress is returned).
spcclResult_t pollState(spcclComm_t comm, int deadlineMs) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    spcclResult_t state = spcclInternalError;
    if (spcclCommGetAsyncError(comm, &state) != spcclSuccess) return spcclInternalError;
    if (state != spcclInProgress || secondsSince(start) * 1000 > deadlineMs) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Threads of this process now (/proc/self/task).
int threadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

// Rank r contributes r + 1 + i at element i; every rank checks the sum.
int allReduceAndCheck(spcclComm_t comm, int rank, int nranks) {
  std::vector<float> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(rank + 1 + i);
  if (spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm,
                     nullptr) != spcclSuccess) {
    std::fprintf(stderr, "rank %d: all-reduce failed: %s\n", rank, spcclGetLastError(comm));
    return kChildWrongResult;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    float expected = static_cast<float>(nranks * (nranks + 1) / 2 + nranks * i);
    if (data[i] != expected) {
      std::fprintf(stderr, "rank %d: element %zu is %g, expected %g\n", rank, i, data[i], expected);
      return kChildWrongResult;
    }
  }
  return kChildOk;
}

void expectAllOk(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r;
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  }
}

// Creation returns spcclInProgress with a handle at once; polling reaches
// spcclSuccess; then a verified all-reduce. Two ranks through the config,
// three through SPCCL_COMM_BLOCKING=0 and spcclCommInitRank.
TEST_P(NonBlockingInit, PollsToSuccessThenAllReduces) {
  for (int n : {2, 3}) {
    const bool fromEnv = n == 3;
    if (fromEnv) setenv("SPCCL_COMM_BLOCKING", "0", 1);
    auto outcomes = forkRanks(n, [n, fromEnv](int rank, const spcclUniqueId& id) {
      spcclConfig_t config = nonBlockingConfig(20000);
      spcclComm_t comm = nullptr;
      auto start = std::chrono::steady_clock::now();
      spcclResult_t res = fromEnv ? spcclCommInitRank(&comm, n, id, rank)
                                  : spcclCommInitRankConfig(&comm, n, id, rank, &config);
      double returnedAfter = secondsSince(start);
      if (res != spcclInProgress || comm == nullptr) {
        std::fprintf(stderr, "rank %d: init returned %d (%s)\n", rank, res,
                     spcclGetLastError(nullptr));
        return kChildInitFailed;
      }
      std::fprintf(stderr, "rank %d of %d: init returned after %.1f ms\n", rank, n,
                   returnedAfter * 1000);
      spcclResult_t state = pollState(comm, 20000);
      if (state != spcclSuccess) {
        std::fprintf(stderr, "rank %d: creation ended with %d: %s\n", rank, state,
                     spcclGetLastError(comm));
        return kChildInitFailed;
      }
      int code = allReduceAndCheck(comm, rank, n);
      if (spcclCommDestroy(comm) != spcclSuccess) return kChildWrongResult;
      return code;
    });
    unsetenv("SPCCL_COMM_BLOCKING");
    SCOPED_TRACE(n);
    expectAllOk(outcomes);
  }
}

// A collective issued while the creation still runs waits for it (the
// choice documented in spccl.h), instead of returning spcclInProgress.
TEST_P(NonBlockingInit, CollectiveBeforeCreationEndsWaitsForIt) {
  const int n = 2;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclConfig_t config = nonBlockingConfig(20000);
    spcclComm_t comm = nullptr;
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (spcclCommInitRankConfig(&comm, n, id, rank, &config) != spcclInProgress)
      return kChildInitFailed;
    int code = allReduceAndCheck(comm, rank, n);
    spcclCommDestroy(comm);
    return code;
  });
  expectAllOk(outcomes);
}

// A non-blocking split of a blocking parent: each half polls its child to
// success and reduces on it.
TEST_P(NonBlockingInit, SplitPollsToSuccess) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t parent = initOrExit(n, id, rank, 20000);
    spcclConfig_t config = nonBlockingConfig(20000);
    spcclComm_t child = nullptr;
    spcclResult_t res = spcclCommSplit(parent, rank % 2, rank, &child, &config);
    if (res != spcclInProgress || child == nullptr) {
      std::fprintf(stderr, "rank %d: split returned %d: %s\n", rank, res,
                   spcclGetLastError(parent));
      return kChildInitFailed;
    }
    if (pollState(child, 20000) != spcclSuccess) {
      std::fprintf(stderr, "rank %d: child failed: %s\n", rank, spcclGetLastError(child));
      return kChildInitFailed;
    }
    int code = allReduceAndCheck(child, rank / 2, 2);
    spcclCommDestroy(child);
    spcclCommDestroy(parent);
    return code;
  });
  expectAllOk(outcomes);
}

// A non-blocking shrink: ranks 0, 1 and 3 shrink without rank 2 (alive,
// not calling), get spcclInProgress and a handle, poll to success and
// reduce on the new communicator.
TEST_P(NonBlockingInit, ShrinkPollsToSuccess) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::seconds(2));  // outlives the others' shrink
      spcclCommDestroy(comm);
      return kChildOk;
    }
    const int exclude[] = {2};
    spcclConfig_t config = nonBlockingConfig(20000);
    spcclComm_t shrunk = nullptr;
    spcclResult_t res = spcclCommShrink(comm, exclude, 1, &config, &shrunk);
    if (res != spcclInProgress || shrunk == nullptr) {
      std::fprintf(stderr, "rank %d: shrink returned %d: %s\n", rank, res, spcclGetLastError(comm));
      return kChildInitFailed;
    }
    if (pollState(shrunk, 20000) != spcclSuccess) {
      std::fprintf(stderr, "rank %d: shrunk failed: %s\n", rank, spcclGetLastError(shrunk));
      return kChildInitFailed;
    }
    int code = allReduceAndCheck(shrunk, rank < 2 ? rank : rank - 1, 3);
    spcclCommDestroy(shrunk);
    spcclCommDestroy(comm);
    return code;
  });
  expectAllOk(outcomes);
}

// Rank 0 never creates its communicator (its process keeps the rendezvous
// root of the unique id alive): the others' state turns from
// spcclInProgress into spcclTimeout naming the rendezvous, within the
// deadline (1.5 s) and a margin.
TEST_P(NonBlockingInit, MissingRankTurnsIntoErrorWithinDeadline) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::seconds(5));
      return kChildOk;
    }
    spcclConfig_t config = nonBlockingConfig(1500);
    spcclComm_t comm = nullptr;
    auto start = std::chrono::steady_clock::now();
    if (spcclCommInitRankConfig(&comm, n, id, rank, &config) != spcclInProgress)
      return kChildInitFailed;
    spcclResult_t early = spcclInternalError;
    spcclCommGetAsyncError(comm, &early);
    spcclResult_t state = pollState(comm, 10000);
    double elapsed = secondsSince(start);
    std::string message = spcclGetLastError(comm);
    std::fprintf(stderr, "rank %d: state %d after %.2f s: %s\n", rank, state, elapsed,
                 message.c_str());
    // Later calls fail with the creation's error instead of hanging.
    float x = 1;
    spcclResult_t call = spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr);
    std::string callMessage = spcclGetLastError(comm);
    spcclCommDestroy(comm);
    if (early != spcclInProgress || state != spcclTimeout ||
        message.find("rendezvous") == std::string::npos)
      return kChildWrongResult;
    if (call != spcclTimeout || callMessage.find("creation failed") == std::string::npos) {
      std::fprintf(stderr, "rank %d: all-reduce after it: %d: %s\n", rank, call,
                   callMessage.c_str());
      return kChildWrongResult;
    }
    return elapsed < 3.5 ? kChildOk : kChildTooSlow;
  });
  expectAllOk(outcomes);
}

// spcclCommAbort (or Destroy) while the creation waits for a rank that
// never comes returns within 2 s and leaves no thread behind. The
// rendezvous root (this rank's unique id, not the communicator's) is
// running before and after.
TEST_P(NonBlockingInit, AbortDuringCreationReturnsFastAndLeaksNoThread) {
  for (bool useDestroy : {false, true}) {
    const int n = 2;
    auto outcomes = forkRanks(n, [useDestroy](int rank, const spcclUniqueId& id) {
      if (rank == 1) return kChildOk;  // never joins
      const int before = threadCount();
      spcclConfig_t config = nonBlockingConfig(30000);
      spcclComm_t comm = nullptr;
      if (spcclCommInitRankConfig(&comm, n, id, rank, &config) != spcclInProgress)
        return kChildInitFailed;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      spcclResult_t state = spcclInternalError;
      spcclCommGetAsyncError(comm, &state);
      if (state != spcclInProgress || threadCount() <= before) {
        std::fprintf(stderr, "state %d, threads %d (before %d)\n", state, threadCount(), before);
        return kChildWrongResult;
      }
      auto start = std::chrono::steady_clock::now();
      spcclResult_t res = useDestroy ? spcclCommDestroy(comm) : spcclCommAbort(comm);
      double took = secondsSince(start);
      int after = threadCount();
      std::fprintf(stderr, "%s took %.1f ms; threads %d before, %d after\n",
                   useDestroy ? "destroy" : "abort", took * 1000, before, after);
      if (res != spcclSuccess || after != before) return kChildWrongResult;
      return took < 2.0 ? kChildOk : kChildTooSlow;
    });
    SCOPED_TRACE(useDestroy ? "destroy" : "abort");
    expectAllOk(outcomes);
  }
}

// spcclCommFinalize with non-blocking requests outstanding (rank 1 joins
// them 300 ms late): on a
// non-blocking communicator it returns spcclInProgress, the state polls to
// spcclSuccess, every request is done with the right sum; on a blocking one
// it returns once they are done. Later calls fail with spcclInvalidUsage.
TEST_P(NonBlockingInit, FinalizeCompletesOutstandingRequests) {
  for (bool blocking : {false, true}) {
    const int n = 2;
    auto outcomes = forkRanks(n, [blocking](int rank, const spcclUniqueId& id) {
      spcclConfig_t config = nonBlockingConfig(20000);
      config.blocking = blocking ? 1 : 0;
      spcclComm_t comm = nullptr;
      spcclResult_t created = spcclCommInitRankConfig(&comm, n, id, rank, &config);
      if (created != (blocking ? spcclSuccess : spcclInProgress)) return kChildInitFailed;
      if (pollState(comm, 20000) != spcclSuccess) return kChildInitFailed;
      // Rank 1 issues late, so rank 0's requests are still running when it
      // finalizes: a finalize that does not wait for them fails below.
      if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const int kRequests = 8;
      std::vector<std::vector<float>> buffers(kRequests, std::vector<float>(1 << 16));
      std::vector<spcclRequest_t> requests(kRequests, nullptr);
      for (int q = 0; q < kRequests; ++q) {
        std::fill(buffers[q].begin(), buffers[q].end(), static_cast<float>(q + rank));
        if (spcclIallReduce(buffers[q].data(), buffers[q].data(), buffers[q].size(), spcclFloat32,
                            spcclSum, comm, &requests[q]) != spcclSuccess)
          return kChildWrongResult;
      }
      spcclResult_t finalized = spcclCommFinalize(comm);
      if (finalized != (blocking ? spcclSuccess : spcclInProgress)) {
        std::fprintf(stderr, "rank %d: finalize returned %d: %s\n", rank, finalized,
                     spcclGetLastError(comm));
        return kChildWrongResult;
      }
      spcclResult_t flushing = spcclInternalError;
      spcclCommGetAsyncError(comm, &flushing);
      if (!blocking && rank == 0 && flushing != spcclInProgress) {
        std::fprintf(stderr, "rank 0: state %d right after finalize\n", flushing);
        return kChildWrongResult;
      }
      if (pollState(comm, 20000) != spcclSuccess) return kChildWrongResult;
      for (int q = 0; q < kRequests; ++q) {
        int done = 0;
        // Done already: the flush ran after them.
        if (spcclTest(requests[q], &done) != spcclSuccess || !done) {
          std::fprintf(stderr, "rank %d: request %d not done after finalize\n", rank, q);
          return kChildWrongResult;
        }
        if (buffers[q].front() != static_cast<float>(2 * q + 1)) return kChildWrongResult;
      }
      float x = 1;
      spcclResult_t after = spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr);
      std::string message = spcclGetLastError(comm);
      spcclResult_t again = spcclCommFinalize(comm);
      if (after != spcclInvalidUsage || message.find("finalized") == std::string::npos ||
          again != spcclInvalidUsage)
        return kChildWrongResult;
      return spcclCommDestroy(comm) == spcclSuccess ? kChildOk : kChildWrongResult;
    });
    SCOPED_TRACE(blocking ? "blocking" : "non-blocking");
    expectAllOk(outcomes);
  }
}

// Bad arguments: spcclInvalidArgument naming the argument, before anything
// starts; a bad rank never returns spcclInProgress.
TEST(NonBlockingInitArguments, NamedInvalidArguments) {
  auto outcomes = forkRanks(1, [](int, const spcclUniqueId& id) {
    spcclResult_t state = spcclSuccess;
    if (spcclCommGetAsyncError(nullptr, &state) != spcclInvalidArgument ||
        std::string(spcclGetLastError(nullptr)).find("comm is NULL") == std::string::npos)
      return 21;
    if (spcclCommFinalize(nullptr) != spcclInvalidArgument ||
        std::string(spcclGetLastError(nullptr)).find("comm is NULL") == std::string::npos)
      return 22;
    spcclConfig_t config = nonBlockingConfig(5000);
    spcclComm_t comm = nullptr;
    if (spcclCommInitRankConfig(&comm, 2, id, 5, &config) != spcclInvalidArgument ||
        comm != nullptr ||
        std::string(spcclGetLastError(nullptr)).find("rank 5") == std::string::npos)
      return 23;
    if (spcclCommInitRankConfig(nullptr, 1, id, 0, &config) != spcclInvalidArgument) return 24;
    if (spcclCommInitRankConfig(&comm, 1, id, 0, &config) != spcclInProgress) return 25;
    if (spcclCommGetAsyncError(comm, nullptr) != spcclInvalidArgument ||
        std::string(spcclGetLastError(nullptr)).find("asyncError is NULL") == std::string::npos)
      return 26;
    if (pollState(comm, 10000) != spcclSuccess) return 27;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

INSTANTIATE_TEST_SUITE_P(Transports, NonBlockingInit, ::testing::Values("tcp", "shm"));

}  // namespace

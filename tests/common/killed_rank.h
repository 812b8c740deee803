// A rank SIGKILLed inside a large all-reduce, the scenario every transport's
// fault tests run: the survivors must fail with spcclRemoteError well before
// the communicator's deadline, never hang. The child's half (the loop and
// the verdict on its error) and the parent's half (the outcomes) live here
// so that every transport is judged by the same rules.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "fork_ranks.h"
#include "spccl.h"
#include "transport_param.h"

namespace spccl::testing {

// The rank that dies; a middle rank, so that it is nobody's only neighbour.
constexpr int kKilledRank = 1;

// Runs in every rank's child once comm is up: the killed rank SIGKILLs
// itself 300 ms in, and every rank runs all-reduces of `count` floats until
// one fails. The exit code: kChildOk when that failure is spcclRemoteError
// within 10 s whose message contains `errorMustContain` (unless NULL).
inline int allReduceUntilRankKilled(spcclComm_t comm, int rank, size_t count,
                                    const char* errorMustContain = nullptr) {
  std::vector<float> data(count, 1.0f);
  if (rank == kKilledRank) {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(getpid(), SIGKILL);
    }).detach();
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10000; ++i) {
    const spcclResult_t res = spcclAllReduce(data.data(), data.data(), data.size(), spcclFloat32,
                                             spcclMax, comm, nullptr);
    if (res == spcclSuccess) continue;
    const char* error = spcclGetLastError(comm);
    std::fprintf(stderr, "rank %d: failed as expected after %.2f s: %s\n", rank,
                 secondsSince(start), error);
    if (res != spcclRemoteError) return kChildWrongResult;
    if (errorMustContain != nullptr && std::strstr(error, errorMustContain) == nullptr)
      return kChildWrongResult;
    return secondsSince(start) < 10.0 ? kChildOk : kChildTooSlow;
  }
  return kChildUnexpectedSuccess;
}

// The parent's verdict: the killed rank died by its signal, every other rank
// exited with kChildOk.
inline void expectSurvivorsFailedFast(const std::vector<RankOutcome>& outcomes) {
  for (int r = 0; r < static_cast<int>(outcomes.size()); ++r) {
    if (r == kKilledRank) {
      EXPECT_FALSE(outcomes[r].exited) << "the killed rank " << r << " exited";
      continue;
    }
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r;
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  }
}

}  // namespace spccl::testing

// Runs a multi-rank scenario inside a test: the parent creates the unique
// id (and so hosts the rendezvous root), forks one child per rank, and
// collects each child's exit status with a deadline. A child that is still
// running at the deadline is killed and reported, so no test can hang.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "spccl.h"

namespace spccl::testing {

struct RankOutcome {
  bool exited = false;  // false: killed by a signal or by the deadline
  int status = -1;      // exit code when exited
  bool timedOut = false;
};

// body(rank, id) returns the child's exit code.
inline std::vector<RankOutcome> forkRanks(int nranks,
                                          const std::function<int(int, const spcclUniqueId&)>& body,
                                          int deadlineSeconds = 60) {
  spcclUniqueId id;
  std::vector<RankOutcome> outcomes(nranks);
  if (spcclGetUniqueId(&id) != spcclSuccess) return outcomes;
  std::vector<pid_t> pids(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int code = body(r, id);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(code);
    }
    pids[r] = pid;
  }
  auto start = std::chrono::steady_clock::now();
  int remaining = nranks;
  while (remaining > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      pid_t done = waitpid(pids[r], &status, WNOHANG);
      if (done == pids[r]) {
        outcomes[r].exited = WIFEXITED(status);
        outcomes[r].status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        pids[r] = -1;
        --remaining;
      }
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(deadlineSeconds)) {
      for (int r = 0; r < nranks; ++r) {
        if (pids[r] < 0) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        outcomes[r].timedOut = true;
        pids[r] = -1;
        --remaining;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return outcomes;
}

// Exit codes children use to report what happened.
constexpr int kChildOk = 0;
constexpr int kChildWrongResult = 10;
constexpr int kChildUnexpectedSuccess = 11;
constexpr int kChildTooSlow = 12;
constexpr int kChildInitFailed = 13;

inline spcclComm_t initOrExit(int nranks, const spcclUniqueId& id, int rank, int timeoutMs) {
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  config.profileLinks = 0;
  spcclComm_t comm = nullptr;
  if (spcclCommInitRankConfig(&comm, nranks, id, rank, &config) != spcclSuccess) {
    std::fprintf(stderr, "rank %d: init failed: %s\n", rank, spcclGetLastError(nullptr));
    _exit(kChildInitFailed);
  }
  return comm;
}

}  // namespace spccl::testing

// Runs a multi-rank scenario inside a test: forks one child per rank and
// collects each child's exit status with a deadline. A child that is still
// running at the deadline is killed and reported, so no test can hang.
// The parent never calls into spccl: rank 0's child creates the unique id
// (and so hosts the rendezvous root) and hands it to the others through
// pipes. A parent with spccl's background threads would fork children that
// can inherit a lock held by one of them (seen with ASan's allocator).
#pragma once

#include <poll.h>
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

// Exit codes children use to report what happened.
constexpr int kChildOk = 0;
constexpr int kChildWrongResult = 10;
constexpr int kChildUnexpectedSuccess = 11;
constexpr int kChildTooSlow = 12;
constexpr int kChildInitFailed = 13;

struct RankOutcome {
  bool exited = false;  // false: killed by a signal or by the deadline
  int status = -1;      // exit code when exited
  bool timedOut = false;
};

// body(rank, id) returns the child's exit code.
inline std::vector<RankOutcome> forkRanks(int nranks,
                                          const std::function<int(int, const spcclUniqueId&)>& body,
                                          int deadlineSeconds = 60) {
  std::vector<RankOutcome> outcomes(nranks);
  std::vector<int> readEnds(nranks, -1), writeEnds(nranks, -1);
  for (int r = 1; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return outcomes;
    readEnds[r] = fds[0];
    writeEnds[r] = fds[1];
  }
  std::vector<pid_t> pids(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      spcclUniqueId id;
      if (r == 0) {
        if (spcclGetUniqueId(&id) != spcclSuccess) _exit(kChildInitFailed);
        for (int peer = 1; peer < nranks; ++peer)
          if (write(writeEnds[peer], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
            _exit(kChildInitFailed);
      } else {
        pollfd ready{readEnds[r], POLLIN, 0};
        if (poll(&ready, 1, deadlineSeconds * 1000) != 1 ||
            read(readEnds[r], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
          _exit(kChildInitFailed);
      }
      int code = body(r, id);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(code);
    }
    pids[r] = pid;
  }
  for (int r = 1; r < nranks; ++r) {
    close(readEnds[r]);
    close(writeEnds[r]);
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

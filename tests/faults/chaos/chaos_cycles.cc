#include "chaos_cycles.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "proc_stats.h"
#include "spccl.h"

namespace spccl::chaos {
namespace {

constexpr long kWarmupCycles = 10;  // the first lifetimes fill caches and pools

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void printStats(const char* mode, const char* when, long cycle, int rank) {
  // Detached threads of a destroyed communicator (a rendezvous root's)
  // end on their own within a moment: let them, so they do not read as
  // a leak.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // RSS of what is live, not of what malloc keeps of what was freed: the
  // pools of ucx's per-connection UCP workers (MiBs, freed at each close)
  // left 2 to 9 MiB more or less behind from run to run without it.
  malloc_trim(0);
  const ProcStats p = readProcStats();
  std::printf(
      "chaos: stat mode=%s when=%s cycle=%ld rank=%d fds=%ld rss_kb=%ld threads=%ld shm_maps=%ld\n",
      mode, when, cycle, rank, p.fds, p.rssKb, p.threads, p.shmMaps);
  std::fflush(stdout);
}

// Every rank contributes (its rank + 1): the sum is n (n + 1) / 2 exactly.
bool verifiedAllReduce(spcclComm_t comm, size_t count, spcclResult_t* res) {
  int rank = -1, n = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &n);
  std::vector<float> data(count, static_cast<float>(rank + 1));
  *res = spcclAllReduce(data.data(), data.data(), count, spcclFloat32, spcclSum, comm, nullptr);
  if (*res != spcclSuccess) return true;  // an error is not a wrong result
  for (float v : data)
    if (v != static_cast<float>(n * (n + 1) / 2)) return false;
  return true;
}

bool initFromEnv(spcclComm_t* comm, int* rank, int* n) {
  if (spcclCommInitFromEnv(comm, nullptr) != spcclSuccess) {
    std::printf("chaos: init-failed err=\"%s\"\n", spcclGetLastError(nullptr));
    return false;
  }
  spcclCommUserRank(*comm, rank);
  spcclCommCount(*comm, n);
  return true;
}

}  // namespace

int runInitCycles(long cycles) {
  spcclComm_t base = nullptr;
  int rank = -1, n = 0;
  if (!initFromEnv(&base, &rank, &n)) return 7;
  double worstMs = 0.0;
  for (long c = 0; c < cycles; ++c) {
    if (c == kWarmupCycles) printStats("init", "first", c, rank);
    const double t0 = nowMs();
    spcclComm_t comm = nullptr;
    spcclResult_t res = spcclCommSplit(base, 0, rank, &comm, nullptr);
    if (res != spcclSuccess) {
      std::printf("chaos: cycle %ld: split failed: %s\n", c, spcclGetLastError(base));
      return 5;
    }
    if (!verifiedAllReduce(comm, 1024, &res)) {
      std::printf("chaos: WRONG cycle %ld: all-reduce on the new communicator\n", c);
      return 1;
    }
    if (res != spcclSuccess) {
      std::printf("chaos: cycle %ld: all-reduce failed: %s\n", c, spcclGetLastError(comm));
      return 5;
    }
    spcclCommDestroy(comm);
    worstMs = std::max(worstMs, nowMs() - t0);
  }
  printStats("init", "end", cycles, rank);
  spcclCommDestroy(base);
  std::printf("chaos: done mode=init cycles=%ld worst_cycle_ms=%.1f\n", cycles, worstMs);
  return 0;
}

int runShrinkCycles(long cycles, size_t count) {
  spcclComm_t base = nullptr;
  int rank = -1, n = 0;
  if (!initFromEnv(&base, &rank, &n)) return 7;
  if (n < 3) {
    std::printf("chaos: --cycles-shrink needs at least 3 ranks, the job has %d\n", n);
    return 2;
  }
  double worstDetectMs = 0.0, worstRecoverMs = 0.0;
  for (long c = 0; c < cycles; ++c) {
    if (c == kWarmupCycles) printStats("shrink", "first", c, rank);
    spcclComm_t comm = nullptr;
    if (spcclCommSplit(base, 0, rank, &comm, nullptr) != spcclSuccess) {
      std::printf("chaos: cycle %ld: split failed: %s\n", c, spcclGetLastError(base));
      return 5;
    }
    // Every rank has finished creating it before the victim leaves: an
    // abort ends a creation still in progress elsewhere (docs/fault-tolerance.md).
    if (spcclBarrier(base, nullptr) != spcclSuccess) {
      std::printf("chaos: cycle %ld: barrier failed: %s\n", c, spcclGetLastError(base));
      return 5;
    }
    const int victim = static_cast<int>(c % n);
    if (rank == victim) {
      spcclCommAbort(comm);  // gone, as far as the others can tell
      continue;
    }
    const double t0 = nowMs();
    spcclResult_t res = spcclSuccess;
    if (!verifiedAllReduce(comm, count, &res)) {
      std::printf("chaos: WRONG cycle %ld: all-reduce with a rank gone succeeded wrongly\n", c);
      return 1;
    }
    const double tDetect = nowMs();
    if (res == spcclSuccess) {
      std::printf("chaos: WRONG cycle %ld: all-reduce succeeded without rank %d\n", c, victim);
      return 1;
    }
    spcclCommRevoke(comm);
    int flag = 1, nFailed = 0, failed[8] = {};
    if (spcclCommAgree(comm, &flag) != spcclSuccess ||
        spcclCommGetFailedRanks(comm, failed, 8, &nFailed) != spcclSuccess || nFailed != 1 ||
        failed[0] != victim) {
      std::printf("chaos: cycle %ld: agreement did not find rank %d alone failed: %s\n", c, victim,
                  spcclGetLastError(comm));
      return 5;
    }
    spcclComm_t shrunk = nullptr;
    if (spcclCommShrink(comm, failed, nFailed, nullptr, &shrunk) != spcclSuccess) {
      std::printf("chaos: cycle %ld: shrink failed: %s\n", c, spcclGetLastError(comm));
      return 5;
    }
    if (!verifiedAllReduce(shrunk, count, &res) || res != spcclSuccess) {
      std::printf("chaos: %s cycle %ld: all-reduce on the shrunk communicator: %s\n",
                  res == spcclSuccess ? "WRONG" : "error", c, spcclGetLastError(shrunk));
      return res == spcclSuccess ? 1 : 5;
    }
    worstDetectMs = std::max(worstDetectMs, tDetect - t0);
    worstRecoverMs = std::max(worstRecoverMs, nowMs() - tDetect);
    spcclCommDestroy(shrunk);
    spcclCommDestroy(comm);
  }
  printStats("shrink", "end", cycles, rank);
  spcclCommDestroy(base);
  std::printf("chaos: done mode=shrink cycles=%ld worst_detect_ms=%.1f worst_recover_ms=%.1f\n",
              cycles, worstDetectMs, worstRecoverMs);
  return 0;
}

}  // namespace spccl::chaos

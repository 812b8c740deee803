// The flight recorder's scenarios with real processes (one per rank,
// tests/common/fork_ranks.h); test_flight_recorder.py runs each and checks
// the dumps with Python's json and spccl_info --dump.
//
//   flight_scenarios dump OUT_PREFIX CALLS  2 ranks, CALLS calls, then spcclCommDump
//                                           to OUT_PREFIX.rank<r>.json
//   flight_scenarios hang                   3 ranks; rank 2 stops calling after 5
//                                           calls, ranks 0 and 1 time out in #6
//   flight_scenarios abort                  2 ranks, 3 calls, rank 0 spcclCommAbort
//   flight_scenarios segv                   1 rank, 4 calls, raise(SIGSEGV)
//   flight_scenarios off OUT_PATH           SPCCL_FLIGHT_RECORDER=0: spcclCommDump
//                                           fails and writes nothing; a timeout and
//                                           an abort dump nothing
//   flight_scenarios overhead CALLS         1 rank: time per tiny all-reduce with
//                                           the recorder at 0 and at 64
// The rank's SPCCL_DEBUG_FILE comes from the environment (use %p).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// Call i of a fixed, mixed sequence: AllReduce, Broadcast, AllGather.
spcclResult_t mixedCall(spcclComm_t comm, int i, int nranks) {
  static std::vector<float> floats(1000, 1.0f);
  static std::vector<int32_t> ints(256, 7);
  static std::vector<double> mine(10, 2.0);
  static std::vector<double> gathered(10 * 8, 0.0);
  switch (i % 3) {
    case 0:
      return spcclAllReduce(floats.data(), floats.data(), floats.size(), spcclFloat32, spcclSum,
                            comm, nullptr);
    case 1:
      return spcclBroadcast(ints.data(), ints.data(), ints.size(), spcclInt32, nranks - 1, comm,
                            nullptr);
    default:
      return spcclAllGather(mine.data(), gathered.data(), mine.size(), spcclFloat64, comm, nullptr);
  }
}

spcclResult_t allReduce(spcclComm_t comm) {
  float x = 1.0f;
  return spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr);
}

bool failed(const char* what, int rank, spcclComm_t comm) {
  std::fprintf(stderr, "rank %d: %s: %s\n", rank, what, spcclGetLastError(comm));
  return true;
}

int verdict(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r)
    if (!outcomes[r].exited || outcomes[r].status != kChildOk) {
      std::fprintf(stderr, "rank %zu: %s %d\n", r, outcomes[r].exited ? "exit" : "killed/signal",
                   outcomes[r].status);
      return 1;
    }
  return 0;
}

int dumpScenario(const std::string& prefix, int calls) {
  const int n = 2;
  return verdict(forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    for (int i = 0; i < calls; ++i)
      if (mixedCall(comm, i, n) != spcclSuccess && failed("call", rank, comm))
        return kChildWrongResult;
    const std::string path = prefix + ".rank" + std::to_string(rank) + ".json";
    if (spcclCommDump(comm, path.c_str()) != spcclSuccess && failed("dump", rank, comm))
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

int hangScenario() {
  const int n = 3;
  return verdict(forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 1500);
    for (int i = 0; i < 5; ++i)
      if (allReduce(comm) != spcclSuccess && failed("call", rank, comm)) return kChildWrongResult;
    if (rank == 2) {
      // Hangs elsewhere (in its own computation) past the others' deadline.
      std::this_thread::sleep_for(std::chrono::seconds(4));
      spcclCommDestroy(comm);  // no dump: a hung rank rarely leaves one
      return kChildOk;
    }
    spcclResult_t res = allReduce(comm);
    if (res != spcclTimeout) {
      std::fprintf(stderr, "rank %d: call #6 gave %s, not a timeout: %s\n", rank,
                   spcclGetErrorString(res), spcclGetLastError(comm));
      return kChildWrongResult;
    }
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

int abortScenario() {
  const int n = 2;
  return verdict(forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 10000);
    for (int i = 0; i < 3; ++i) {
      const spcclResult_t res = mixedCall(comm, i, n);
      // Rank 0 may abort while this rank still finishes call #3.
      if (res == spcclRemoteError && rank == 1 && i == 2) return kChildOk;
      if (res != spcclSuccess && failed("call", rank, comm)) return kChildWrongResult;
    }
    if (rank == 0) {
      spcclCommAbort(comm);
      return kChildOk;
    }
    if (allReduce(comm) == spcclSuccess) return kChildUnexpectedSuccess;
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

int segvScenario() {
  auto outcomes = forkRanks(1, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(1, id, rank, 10000);
    for (int i = 0; i < 4; ++i)
      if (mixedCall(comm, i, 1) != spcclSuccess && failed("call", rank, comm))
        return kChildWrongResult;
    raise(SIGSEGV);
    return kChildUnexpectedSuccess;
  });
  if (outcomes[0].exited || outcomes[0].status != -SIGSEGV) {
    std::fprintf(stderr, "the rank was to die of SIGSEGV: exited %d status %d\n",
                 outcomes[0].exited, outcomes[0].status);
    return 1;
  }
  return 0;
}

int offScenario(const std::string& path) {
  const int n = 2;
  return verdict(forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 1000);
    for (int i = 0; i < 3; ++i)
      if (mixedCall(comm, i, n) != spcclSuccess && failed("call", rank, comm))
        return kChildWrongResult;
    if (rank == 0) {
      if (spcclCommDump(comm, path.c_str()) != spcclInvalidUsage) return kChildWrongResult;
      std::fprintf(stderr, "rank 0: spcclCommDump: %s\n", spcclGetLastError(comm));
      if (allReduce(comm) != spcclTimeout) return kChildWrongResult;
      spcclCommAbort(comm);
      return kChildOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    spcclCommDestroy(comm);
    return kChildOk;
  }));
}

double secondsPerCall(int calls, const char* records) {
  setenv("SPCCL_FLIGHT_RECORDER", records, 1);
  spcclUniqueId id;
  spcclComm_t comm = nullptr;
  if (spcclGetUniqueId(&id) != spcclSuccess || spcclCommInitRank(&comm, 1, id, 0) != spcclSuccess) {
    std::fprintf(stderr, "init failed: %s\n", spcclGetLastError(nullptr));
    std::exit(1);
  }
  for (int i = 0; i < calls / 10; ++i) allReduce(comm);  // warm up
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) allReduce(comm);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spcclCommDestroy(comm);
  return seconds / calls;
}

int overheadScenario(int calls) {
  // Alternated, three rounds each, medians: the machine is shared.
  std::vector<double> off, on;
  for (int round = 0; round < 3; ++round) {
    off.push_back(secondsPerCall(calls, "0"));
    on.push_back(secondsPerCall(calls, "64"));
  }
  std::sort(off.begin(), off.end());
  std::sort(on.begin(), on.end());
  std::printf("flight recorder overhead, 1 rank, %d AllReduce calls of 1 float, median of 3:\n",
              calls);
  std::printf("  SPCCL_FLIGHT_RECORDER=0:  %.1f ns per call\n", off[1] * 1e9);
  std::printf("  SPCCL_FLIGHT_RECORDER=64: %.1f ns per call (%+.1f ns)\n", on[1] * 1e9,
              (on[1] - off[1]) * 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "dump" && argc == 4) return dumpScenario(argv[2], std::atoi(argv[3]));
  if (mode == "hang") return hangScenario();
  if (mode == "abort") return abortScenario();
  if (mode == "segv") return segvScenario();
  if (mode == "off" && argc == 3) return offScenario(argv[2]);
  if (mode == "overhead" && argc == 3) return overheadScenario(std::atoi(argv[2]));
  std::fprintf(stderr,
               "usage: flight_scenarios dump PREFIX CALLS | hang | abort | segv | "
               "off PATH | overhead CALLS\n");
  return 2;
}

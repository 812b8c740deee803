// One rank of the hostile-listener test (test_hostile_listeners.py): times
// spcclCommInitFromEnv, runs one all-reduce, checks it, and prints
//   hostile_init: rank R init_ms T
// A failure prints the error and exits 1.
#include <chrono>
#include <cstdio>

#include "spccl.h"

int main() {
  spcclComm_t comm = nullptr;
  auto start = std::chrono::steady_clock::now();
  spcclResult_t res = spcclCommInitFromEnv(&comm, nullptr);
  double initMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (res != spcclSuccess) {
    std::fprintf(stderr, "hostile_init: init failed: %s: %s\n", spcclGetErrorString(res),
                 spcclGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &nranks);
  int value = rank + 1;
  res = spcclAllReduce(&value, &value, 1, spcclInt32, spcclSum, comm, nullptr);
  if (res != spcclSuccess || value != nranks * (nranks + 1) / 2) {
    std::fprintf(stderr, "hostile_init: rank %d: all-reduce %s, sum %d\n", rank,
                 spcclGetErrorString(res), value);
    return 1;
  }
  std::printf("hostile_init: rank %d init_ms %.1f\n", rank, initMs);
  spcclCommDestroy(comm);
  return 0;
}

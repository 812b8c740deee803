#include "interpose_report.h"

#include <mpi.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <mutex>

#include "mpi_family.h"

namespace spccl::mpi {

namespace {

struct Totals {
  uint64_t calls[kNumPaths] = {};
  uint64_t bytes[kNumPaths] = {};
  double seconds[kNumPaths] = {};
};

std::mutex gMutex;
Totals gTotals;

}  // namespace

void recordCall(Path path, size_t bytes, double seconds) {
  const int row = static_cast<int>(path);
  std::lock_guard<std::mutex> lock(gMutex);
  gTotals.calls[row] += 1;
  gTotals.bytes[row] += bytes;
  gTotals.seconds[row] += seconds;
}

void printReport(Policy policy, size_t minBytes) {
  Totals mine;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    mine = gTotals;
  }
  uint64_t minCalls[kNumPaths], maxCalls[kNumPaths];
  double maxSeconds[kNumPaths];
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // uint64_t travels as MPI_UINT64_T, the type MPI defines for it.
  if (PMPI_Reduce(mine.calls, minCalls, kNumPaths, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      PMPI_Reduce(mine.calls, maxCalls, kNumPaths, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      PMPI_Reduce(mine.seconds, maxSeconds, kNumPaths, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) !=
          MPI_SUCCESS)
    return;
  if (rank != 0) return;
  std::fprintf(stderr,
               "spccl MPI interposer report (%s build; SPCCL_INTERPOSE=%s, "
               "SPCCL_INTERPOSE_MIN_BYTES=%zu, %d ranks in MPI_COMM_WORLD)\n"
               "| path | calls | bytes | seconds (slowest rank) |\n|---|---|---|---|\n",
               SPCCL_MPI_FAMILY, policyName(policy), minBytes, size);
  uint64_t total = 0;
  for (int row = 0; row < kNumPaths; ++row) {
    if (maxCalls[row] == 0) continue;
    total += mine.calls[row];
    std::fprintf(stderr, "| %s | %" PRIu64 " | %" PRIu64 " | %.6f |%s\n",
                 pathName(static_cast<Path>(row)), mine.calls[row], mine.bytes[row],
                 maxSeconds[row],
                 minCalls[row] != maxCalls[row] ? " (calls differ between ranks: communicators "
                                                  "of a subset)"
                                                : "");
  }
  if (total == 0) std::fprintf(stderr, "| (no MPI_Allreduce calls) | 0 | 0 | 0 |\n");
  std::fflush(stderr);
}

}  // namespace spccl::mpi

/* An ordinary MPI timing program (knows nothing of spccl): MPI_Allreduce
 * (float, MPI_SUM) of a sparse tensor, the same program timed with and
 * without LD_PRELOAD=libspccl_mpi_interpose.so by
 * tests/netns/bench_mpi_interpose.sh.
 *
 *   mpi_sparse_allreduce_bench [--count N] [--density D] [--warmup W] [--iters I]
 *
 * Input: density D per rank, half of the non-zeros at positions shared by
 * every rank (test_inputs.h). Per iteration the slowest rank's time counts
 * (MPI_MAX of local times: not MPI_SUM, so never interposed); rank 0
 * prints one JSON line with the median. The last result is checked on a
 * sample of elements against a locally computed reference.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_inputs.h"

enum { kSeed = 77, kCheckStride = 61 };

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long count = 16L << 20;
  double density = 0.01;
  int warmup = 1, iters = 5;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) {
      if (rank == 0) fprintf(stderr, "mpi_sparse_allreduce_bench: %s needs a value\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!strcmp(argv[i], "--count"))
      count = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--density"))
      density = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--warmup"))
      warmup = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--iters"))
      iters = atoi(argv[i + 1]);
    else {
      if (rank == 0) fprintf(stderr, "mpi_sparse_allreduce_bench: unknown option %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (count <= 0 || count > 2147483647L || density < 0 || density > 1 || iters < 1 || warmup < 0) {
    if (rank == 0)
      fprintf(stderr,
              "mpi_sparse_allreduce_bench: need 0 < --count < 2^31, 0 <= --density <= 1, "
              "--iters >= 1, --warmup >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  float* send = calloc((size_t)count, sizeof(float));
  float* recv = calloc((size_t)count, sizeof(float));
  double* times = calloc((size_t)iters, sizeof(double));
  if (!send || !recv || !times) {
    fprintf(stderr, "mpi_sparse_allreduce_bench: rank %d cannot allocate %ld floats\n", rank,
            count);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  long nonzeros = 0;
  for (long i = 0; i < count; ++i)
    if (input_nonzero(kSeed, rank, (uint64_t)i, density)) {
      send[i] = (float)input_value(kSeed, rank, (uint64_t)i, 1, 0);
      ++nonzeros;
    }

  for (int it = 0; it < warmup + iters; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double local = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= warmup) times[it - warmup] = slowest;
  }

  /* Positive summands: any order is within (n - 1) eps of the sum. */
  long wrong = 0;
  for (long i = rank % kCheckStride; i < count; i += kCheckStride) {
    double want = 0;
    for (int r = 0; r < n; ++r)
      if (input_nonzero(kSeed, r, (uint64_t)i, density))
        want += input_value(kSeed, r, (uint64_t)i, 1, 0);
    if (fabs(recv[i] - want) > 2.0 * n * FLT_EPSILON * want) {
      if (wrong < 3)
        fprintf(stderr, "rank %d: element %ld is %g, want %g\n", rank, i, recv[i], want);
      ++wrong;
    }
  }
  long total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(times, (size_t)iters, sizeof(double), compare_doubles);
    const double median =
        iters % 2 ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
    printf(
        "{\"program\": \"mpi_sparse_allreduce_bench\", \"n\": %d, \"count\": %ld, "
        "\"density\": %g, \"nonzeros_rank0\": %ld, \"iters\": %d, \"min_s\": %.6f, "
        "\"median_s\": %.6f, \"max_s\": %.6f, \"wrong\": %ld}\n",
        n, count, density, nonzeros, iters, times[0], median, times[iters - 1], total_wrong);
    fflush(stdout);
  }
  free(send);
  free(recv);
  free(times);
  MPI_Finalize();
  return total_wrong ? 1 : 0;
}

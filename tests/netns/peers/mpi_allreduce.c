/* Open MPI dense all-reduce peer: MPI_Allreduce(float32, MPI_SUM) timing.
 *
 *   mpi_allreduce [--bytes B] [--warmup W] [--iters I]
 *
 * Launched across the netlab hosts by tests/netns/peers/mpi_run.sh. Per
 * iteration the slowest rank's time counts (MPI_Allreduce MAX of local
 * times), median over >= 5 timed iterations (docs/benchmarking.md). Rank 0 prints
 * one JSON line shaped like gloo_allreduce.py's. The algorithm is Open MPI's
 * choice unless the caller forces one via OMPI_MCA_coll_tuned_* (mpi_run.sh
 * passes --algorithm through).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMinTimedIters = 5 };

typedef struct {
  long long bytes;
  int warmup;
  int iters;
} Options;

static int parse_options(int argc, char** argv, Options* opt) {
  opt->bytes = 64LL << 20;
  opt->warmup = 1;
  opt->iters = 5;
  for (int i = 1; i < argc; ++i) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!value) {
      fprintf(stderr, "mpi_allreduce: option %s needs a value\n", argv[i]);
      return -1;
    }
    if (!strcmp(argv[i], "--bytes")) {
      opt->bytes = atoll(value);
    } else if (!strcmp(argv[i], "--warmup")) {
      opt->warmup = atoi(value);
    } else if (!strcmp(argv[i], "--iters")) {
      opt->iters = atoi(value);
    } else {
      fprintf(stderr, "mpi_allreduce: unknown option %s\n", argv[i]);
      return -1;
    }
    ++i;
  }
  if (opt->bytes <= 0 || opt->bytes % 4 || opt->iters < kMinTimedIters || opt->warmup < 0) {
    fprintf(stderr, "mpi_allreduce: need --bytes a positive multiple of 4, --iters >= %d\n",
            kMinTimedIters);
    return -1;
  }
  return 0;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  Options opt;
  if (parse_options(argc, argv, &opt) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
  const size_t elements = (size_t)(opt.bytes / 4);
  float* buf = malloc(elements * sizeof(float));
  double* times = malloc((size_t)opt.iters * sizeof(double));
  if (!buf || !times) {
    fprintf(stderr, "mpi_allreduce: rank %d cannot allocate %lld bytes\n", rank, opt.bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  for (int it = 0; it < opt.warmup + opt.iters; ++it) {
    for (size_t i = 0; i < elements; ++i) buf[i] = (float)(rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double local = MPI_Wtime() - start, slowest = 0.0;
    MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= opt.warmup) times[it - opt.warmup] = slowest;
  }

  /* Small integers sum exactly in float32: every element must be n(n+1)/2. */
  const float expected = (float)n * (float)(n + 1) / 2.0f;
  for (size_t i = 0; i < elements; ++i) {
    if (buf[i] != expected) {
      fprintf(stderr, "mpi_allreduce: rank %d element %zu is %g, expected %g\n", rank, i,
              (double)buf[i], (double)expected);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }

  if (rank == 0) {
    printf(
        "{\"peer\": \"openmpi\", \"mode\": \"dense\", \"n\": %d, \"bytes\": %lld, "
        "\"elements\": %zu, \"density\": 1.0, \"iters\": %d, \"times_s\": [",
        n, opt.bytes, elements, opt.iters);
    for (int i = 0; i < opt.iters; ++i) printf("%s%.6f", i ? ", " : "", times[i]);
    printf("], \"median_s\": %.6f}\n", median(times, opt.iters));
    fflush(stdout);
  }
  free(times);
  free(buf);
  MPI_Finalize();
  return 0;
}

/* Communicator life cycles an MPI_Allreduce interposer must survive; an
 * ordinary MPI program (knows nothing of spccl).
 *
 *   mpi_lifecycle never-allreduce   MPI without a single MPI_Allreduce
 *   mpi_lifecycle comm-free         split / dup, all-reduce, MPI_Comm_free, 3 times
 *   mpi_lifecycle finalize-cached   all-reduces on communicators never freed
 *   mpi_lifecycle mismatch          ranks pass different counts (an erroneous
 *                                   program) under MPI_ERRORS_RETURN: every
 *                                   rank must get an error back, none may hang
 * Exit 0 on success.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCount = 100000 };

/* A sparse float all-reduce on comm, checked: element i is rank+1 on every
 * rank where i % 100 == rank % 7, else 0. Returns the wrong element count. */
static int checked_allreduce(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  float* in = calloc(kCount, sizeof(float));
  float* out = calloc(kCount, sizeof(float));
  for (int i = rank % 7; i < kCount; i += 100) in[i] = (float)(rank + 1);
  MPI_Allreduce(in, out, kCount, MPI_FLOAT, MPI_SUM, comm);
  int wrong = 0;
  for (int i = 0; i < kCount; ++i) {
    float want = 0;
    for (int r = 0; r < size; ++r)
      if (i % 100 == r % 7) want += (float)(r + 1);
    if (out[i] != want) {
      if (wrong < 3) fprintf(stderr, "rank %d: element %d is %g, want %g\n", rank, i, out[i], want);
      ++wrong;
    }
  }
  free(in);
  free(out);
  return wrong;
}

static int never_allreduce(int rank) {
  int value = rank == 0 ? 42 : 0, sum = 0;
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(&value, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  return value == 42 ? 0 : 1;
}

static int comm_free(int rank) {
  int wrong = 0;
  for (int round = 0; round < 3; ++round) {
    MPI_Comm split, dup;
    MPI_Comm_split(MPI_COMM_WORLD, (rank + round) % 2, rank, &split);
    wrong += checked_allreduce(split);
    /* A dup of a communicator with a cached spccl communicator must get its own. */
    MPI_Comm_dup(split, &dup);
    wrong += checked_allreduce(dup);
    MPI_Comm_free(&split);
    wrong += checked_allreduce(dup);
    MPI_Comm_free(&dup);
    if (split != MPI_COMM_NULL || dup != MPI_COMM_NULL) ++wrong;
  }
  return wrong;
}

static int finalize_cached(int rank) {
  MPI_Comm split, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  return checked_allreduce(MPI_COMM_WORLD) + checked_allreduce(split) + checked_allreduce(dup);
  /* split and dup stay allocated: MPI_Finalize must cope. */
}

static int mismatch(int rank) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int count = rank == 0 ? kCount : 2 * kCount;
  float* in = calloc(2 * kCount, sizeof(float));
  float* out = calloc(2 * kCount, sizeof(float));
  in[rank] = 1;
  const int rc = MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &length);
  printf("rank %d: mismatched MPI_Allreduce returned %d (%s)\n", rank, rc, text);
  free(in);
  free(out);
  /* MPI_MIN is not MPI_SUM, so this one stays on MPI even under the interposer. */
  int failed = rc != MPI_SUCCESS, all_failed = 0;
  MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_failed ? 0 : 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* what = argc == 2 ? argv[1] : "";
  int wrong;
  if (!strcmp(what, "never-allreduce"))
    wrong = never_allreduce(rank);
  else if (!strcmp(what, "comm-free"))
    wrong = comm_free(rank);
  else if (!strcmp(what, "finalize-cached"))
    wrong = finalize_cached(rank);
  else if (!strcmp(what, "mismatch"))
    wrong = mismatch(rank);
  else {
    if (rank == 0)
      fprintf(stderr, "usage: mpi_lifecycle never-allreduce|comm-free|finalize-cached|mismatch\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  printf("mpi_lifecycle %s: rank %d %s\n", what, rank, wrong ? "FAILED" : "ok");
  MPI_Finalize();
  return wrong ? 1 : 0;
}

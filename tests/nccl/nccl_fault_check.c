/*
 * Failures through nccl.h's API only, with libspccl_nccl.so in replace mode
 * and host buffers (tests/nccl/run_nccl_test.sh runs it, one process per
 * rank under spcclrun):
 *
 *   nccl_fault_check ID_DIR --kill RANK
 *     A verified all-reduce on every rank; then rank RANK kills itself
 *     (SIGKILL) once the others have checked theirs. The survivors' next
 *     all-reduce fails; they revoke the communicator (NCCL's result codes
 *     around it checked), shrink it without RANK and run verified
 *     all-reduces, sparse and dense, on the new one. Run with spcclrun
 *     --keep-going: the survivors print PASS.
 *
 *   nccl_fault_check ID_DIR --abort-while-blocked
 *     Two ranks. Rank 0 starts an all-reduce on a thread of its own that
 *     blocks (rank 1 does not take part), and calls ncclCommAbort from the
 *     main thread while it waits: the blocked call must return an error,
 *     the abort must return, both within bounds, and the handle is unknown
 *     afterwards. Under ASan this also checks that nothing touches the
 *     freed communicator.
 *
 * The rank and the rank count come from SPCCL_RANK / SPCCL_NRANKS; rank
 * 0's unique id and the ranks' progress marks travel as files in ID_DIR,
 * named after SPCCL_COMM_ID.
 */
#include <errno.h>
#include <math.h>
#include <nccl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_check.h"

static const char* gDir = ".";

#define NCCLCHECK(call)                                                                         \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    CHECK(r_ == ncclSuccess, "%s returned %d (%s): %s", #call, (int)r_, ncclGetErrorString(r_), \
          ncclGetLastError(NULL));                                                              \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- files in ID_DIR: the unique id and progress marks ---- */

static void pathOf(char* path, size_t size, const char* tag, int rank) {
  const char* job = getenv("SPCCL_COMM_ID");
  snprintf(path, size, "%s/%s.%s.%d", gDir, job ? job : "local", tag, rank);
}

static void writeMark(const char* tag, const void* data, size_t bytes) {
  char path[4096], tmp[4200];
  pathOf(path, sizeof(path), tag, gRank);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "wb");
  CHECK(f != NULL, "cannot write %s: %s", tmp, strerror(errno));
  CHECK(bytes == 0 || fwrite(data, bytes, 1, f) == 1, "write %s", tmp);
  CHECK(fclose(f) == 0, "close %s", tmp);
  CHECK(rename(tmp, path) == 0, "rename to %s: %s", path, strerror(errno));
}

/* Waits up to 60 s for rank's mark; reads bytes of it into data. */
static void awaitMark(const char* tag, int rank, void* data, size_t bytes) {
  char path[4096];
  pathOf(path, sizeof(path), tag, rank);
  for (int waited = 0; waited < 60000; waited += 5) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      const size_t got = bytes == 0 ? 1 : fread(data, bytes, 1, f);
      fclose(f);
      if (got == 1) return;
    }
    usleep(5000);
  }
  CHECK(0, "no mark %s after 60 s", path);
}

static ncclComm_t initWorld(void) {
  ncclUniqueId id;
  if (gRank == 0) {
    NCCLCHECK(ncclGetUniqueId(&id));
    writeMark("ncclid", &id, sizeof(id));
  } else {
    awaitMark("ncclid", 0, &id, sizeof(id));
  }
  ncclComm_t world = NULL;
  NCCLCHECK(ncclCommInitRank(&world, gNranks, id, gRank));
  return world;
}

/* ---- verified all-reduces ---- */

/* Rank r's element i: non-zero at about density of the positions, values
 * multiples of 1/8 so that sums are exact in any order. */
static float valueAt(int rank, size_t i, double density) {
  uint32_t x = (uint32_t)i * 2654435761U ^ (uint32_t)(rank + 1) * 0x9e3779b9U;
  x ^= x >> 15;
  x *= 0x2c1b3c6dU;
  x ^= x >> 12;
  if ((double)(x % 100000) >= density * 100000.0) return 0.0f;
  return (float)((int)((x >> 8) % 17) - 8) / 8.0f;
}

/* ranks[k] is the old rank whose data new rank k contributes. */
static void checkAllReduce(ncclComm_t comm, size_t count, double density, const int* ranks,
                           int nranks, int me) {
  float* buf = (float*)malloc(count * sizeof(float));
  CHECK(buf != NULL, "malloc");
  for (size_t i = 0; i < count; ++i) buf[i] = valueAt(ranks[me], i, density);
  NCCLCHECK(ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm, NULL));
  for (size_t i = 0; i < count; ++i) {
    double want = 0;
    for (int k = 0; k < nranks; ++k) want += valueAt(ranks[k], i, density);
    CHECK(fabs(buf[i] - want) < 1e-6,
          "all-reduce of %zu (density %g) on %d ranks: [%zu] = %g, "
          "want %g",
          count, density, nranks, i, buf[i], want);
  }
  free(buf);
}

/* ---- --kill RANK ---- */

static void checkKillRevokeShrink(int victim) {
  CHECK(gNranks >= 3 && victim >= 0 && victim < gNranks, "--kill %d on %d ranks", victim, gNranks);
  ncclComm_t world = initWorld();
  int all[64];
  for (int r = 0; r < gNranks; ++r) all[r] = r;
  checkAllReduce(world, 1000, 1.0, all, gNranks, gRank);
  writeMark("checked", NULL, 0);
  if (gRank == victim) {
    /* Once every other rank has its result: nothing of the first call is
     * lost with this process. */
    for (int r = 0; r < gNranks; ++r)
      if (r != victim) awaitMark("checked", r, NULL, 0);
    kill(getpid(), SIGKILL);
    pause();
  }
  float x[256] = {0};
  const double start = now();
  const ncclResult_t failed = ncclAllReduce(x, x, 256, ncclFloat32, ncclSum, world, NULL);
  CHECK(failed == ncclRemoteError || failed == ncclInvalidUsage,
        "the all-reduce with rank %d dead returned %d (%s)", victim, (int)failed,
        ncclGetErrorString(failed));
  printf("rank %d: the all-reduce with rank %d dead failed in %.0f ms: %d (%s): %s\n", gRank,
         victim, 1e3 * (now() - start), (int)failed, ncclGetErrorString(failed),
         ncclGetLastError(world));

  /* NCCL's answers around a revoke (init.cc, enqueue.cc) */
  CHECK(ncclCommRevoke(world, 1) == ncclInvalidArgument, "revokeFlags 1");
  NCCLCHECK(ncclCommRevoke(world, NCCL_REVOKE_DEFAULT));
  CHECK(ncclCommRevoke(world, NCCL_REVOKE_DEFAULT) == ncclInvalidArgument, "revoking twice");
  CHECK(ncclAllReduce(x, x, 256, ncclFloat32, ncclSum, world, NULL) == ncclInvalidUsage,
        "an all-reduce on a revoked communicator");
  CHECK(strstr(ncclGetLastError(world), "revoked") != NULL, "last error: %s",
        ncclGetLastError(world));
  CHECK(ncclCommFinalize(world) == ncclInvalidArgument, "ncclCommFinalize after a revoke");
  CHECK(ncclCommRevoke(NULL, NCCL_REVOKE_DEFAULT) == ncclSuccess, "revoking NULL");

  ncclComm_t rest = NULL;
  const double shrinkStart = now();
  NCCLCHECK(ncclCommShrink(world, &victim, 1, &rest, NULL, NCCL_SHRINK_DEFAULT));
  const double shrinkMs = 1e3 * (now() - shrinkStart);
  int count = -1, rank = -1;
  NCCLCHECK(ncclCommCount(rest, &count));
  NCCLCHECK(ncclCommUserRank(rest, &rank));
  const int want = gRank < victim ? gRank : gRank - 1;
  CHECK(count == gNranks - 1 && rank == want, "shrunk: rank %d of %d, want %d of %d", rank, count,
        want, gNranks - 1);
  int survivors[64], n = 0;
  for (int r = 0; r < gNranks; ++r)
    if (r != victim) survivors[n++] = r;
  /* above and below SPCCL_INTERPOSE_MIN_BYTES, sparse and dense */
  checkAllReduce(rest, 100000, 0.01, survivors, n, rank);
  checkAllReduce(rest, 100000, 1.0, survivors, n, rank);
  checkAllReduce(rest, 1000, 1.0, survivors, n, rank);
  printf("rank %d: shrink without rank %d took %.1f ms; new rank %d of %d\n", gRank, victim,
         shrinkMs, rank, count);
  NCCLCHECK(ncclCommDestroy(rest));
  NCCLCHECK(ncclCommDestroy(world));
}

/* ---- --abort-while-blocked ---- */

struct Blocked {
  ncclComm_t comm;
  ncclResult_t result;
  double returnedAt;
  char error[512];
};

static void* blockedAllReduce(void* arg) {
  struct Blocked* b = (struct Blocked*)arg;
  float x[1024] = {0};
  b->result = ncclAllReduce(x, x, 1024, ncclFloat32, ncclSum, b->comm, NULL);
  b->returnedAt = now();
  snprintf(b->error, sizeof(b->error), "%s", ncclGetLastError(NULL));
  return NULL;
}

static void checkAbortWhileBlocked(void) {
  CHECK(gNranks == 2, "--abort-while-blocked needs 2 ranks, not %d", gNranks);
  ncclComm_t world = initWorld();
  int all[2] = {0, 1};
  checkAllReduce(world, 1000, 1.0, all, 2, gRank);
  if (gRank == 1) {
    /* Takes no part until rank 0 has aborted; then its own call fails
     * (the abort told it) instead of waiting for the deadline. */
    awaitMark("aborted", 0, NULL, 0);
    float x[1024] = {0};
    const double start = now();
    const ncclResult_t r = ncclAllReduce(x, x, 1024, ncclFloat32, ncclSum, world, NULL);
    CHECK(r != ncclSuccess, "an all-reduce after the peer aborted succeeded");
    CHECK(now() - start < 10.0, "the all-reduce after the peer aborted took %.1f s", now() - start);
    NCCLCHECK(ncclCommAbort(world));
    return;
  }
  struct Blocked blocked = {world, ncclSuccess, 0, ""};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, blockedAllReduce, &blocked) == 0, "pthread_create");
  usleep(300 * 1000); /* let it block in the call */
  const double abortAt = now();
  NCCLCHECK(ncclCommAbort(world));
  const double abortMs = 1e3 * (now() - abortAt);
  CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
  const double callMs = 1e3 * (blocked.returnedAt - abortAt);
  writeMark("aborted", NULL, 0);
  printf(
      "rank 0: ncclCommAbort returned in %.1f ms; the blocked all-reduce %.1f ms after it "
      "began, with %d (%s): %s\n",
      abortMs, callMs, (int)blocked.result, ncclGetErrorString(blocked.result), blocked.error);
  CHECK(blocked.result != ncclSuccess, "the blocked all-reduce succeeded");
  CHECK(strstr(blocked.error, "ncclCommAbort") != NULL, "the blocked call's error: %s",
        blocked.error);
  /* bounds: one wake-up of the engine (100 ms), with room for a loaded host */
  CHECK(abortMs < 3000 && callMs < 3000, "abort %.0f ms, blocked call %.0f ms", abortMs, callMs);
  int count = 0;
  CHECK(ncclCommCount(world, &count) == ncclInvalidArgument, "the aborted handle is still known");
  CHECK(ncclCommAbort(world) == ncclInvalidArgument, "aborting twice");
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ID_DIR --kill RANK | --abort-while-blocked\n", argv[0]);
    return 2;
  }
  gDir = argv[1];
  if (getenv("SPCCL_RANK")) gRank = atoi(getenv("SPCCL_RANK"));
  if (getenv("SPCCL_NRANKS")) gNranks = atoi(getenv("SPCCL_NRANKS"));
  if (strcmp(argv[2], "--kill") == 0 && argc > 3) {
    checkKillRevokeShrink(atoi(argv[3]));
  } else if (strcmp(argv[2], "--abort-while-blocked") == 0) {
    checkAbortWhileBlocked();
  } else {
    fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[2]);
    return 2;
  }
  printf("rank %d: PASS (%d checks)\n", gRank, gChecks);
  return 0;
}

/*
 * The NCCL program tests/faults/alloc_failure.sh fails allocations under,
 * with libspccl_nccl.so in place of NCCL (replace mode, host buffers): the
 * unique id, the communicator's creation, a sparse all-reduce (routed to
 * spccl's sparse path), a small dense one, a group of sends and receives
 * around the ring, a broadcast, a split and its all-reduce, a clique of
 * two ranks in this process (ncclCommInitAll) and a group of an
 * all-reduce on each, and the destructions, each checked. C, so that its
 * own code allocates nothing but its checked buffers and the id's file.
 *   nccl_alloc_victim ID_DIR
 * Exit 0: every call succeeded with the right result; 3: a call failed
 * with an error (printed, with ncclGetLastError's message); 4: a wrong
 * result (a failure). Rank 0's unique id reaches the others through a
 * file in ID_DIR (nccl_check.h).
 */
#include "nccl_check.h"

void fail_alloc_arm(void) __attribute__((weak));

static ncclComm_t gComm;

static void failed(const char* what, ncclResult_t r) {
  printf("victim: %s failed: %s: %s\n", what, ncclGetErrorString(r), ncclGetLastError(gComm));
  exit(3);
}

#define CALL(what, call)                     \
  do {                                       \
    ncclResult_t r_ = (call);                \
    if (r_ != ncclSuccess) failed(what, r_); \
  } while (0)

static void expect(const char* what, size_t i, float got, float want) {
  if (got == want) return;
  printf("victim: %s [%zu] = %g, want %g\n", what, i, got, want);
  exit(4);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ID_DIR\n", argv[0]);
    return 2;
  }
  const char* rank = getenv("SPCCL_RANK");
  const char* nranks = getenv("SPCCL_NRANKS");
  gRank = rank != NULL ? atoi(rank) : 0;
  gNranks = nranks != NULL ? atoi(nranks) : 1;
  if (fail_alloc_arm != NULL) fail_alloc_arm();
  const size_t count = 65536; /* 256 KiB: above SPCCL_INTERPOSE_MIN_BYTES, sparse */
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  if (a == NULL || b == NULL) {
    printf("victim: malloc failed\n");
    return 3;
  }
  ncclUniqueId id;
  char why[4400];
  if (tryShareId(argv[1], "victim", &id, why, sizeof(why)) != 0) {
    printf("victim: sharing the unique id failed: %s\n", why);
    return 3;
  }
  CALL("ncclCommInitRank", ncclCommInitRank(&gComm, gNranks, id, gRank));
  const size_t n = (size_t)gNranks;

  for (size_t i = 0; i < count; ++i) a[i] = (i % 100 == (size_t)gRank) ? (float)(i % 7 + 1) : 0.0f;
  CALL("ncclAllReduce (sparse)", ncclAllReduce(a, b, count, ncclFloat32, ncclSum, gComm, NULL));
  for (size_t i = 0; i < count; ++i)
    expect("sparse all-reduce", i, b[i], (i % 100 < n) ? (float)(i % 7 + 1) : 0.0f);

  const size_t small = 1024; /* below the threshold: spccl's dense all-reduce */
  for (size_t i = 0; i < small; ++i) a[i] = (float)(gRank + 1);
  CALL("ncclAllReduce (dense)", ncclAllReduce(a, b, small, ncclFloat32, ncclSum, gComm, NULL));
  for (size_t i = 0; i < small; ++i) expect("dense all-reduce", i, b[i], (float)(n * (n + 1) / 2));

  const int next = (gRank + 1) % gNranks, previous = (gRank + gNranks - 1) % gNranks;
  for (size_t i = 0; i < small; ++i) a[i] = (float)(gRank * 1000 + (int)i);
  CALL("ncclGroupStart", ncclGroupStart());
  CALL("ncclSend", ncclSend(a, small, ncclFloat32, next, gComm, NULL));
  CALL("ncclRecv", ncclRecv(b, small, ncclFloat32, previous, gComm, NULL));
  CALL("ncclGroupEnd", ncclGroupEnd());
  for (size_t i = 0; i < small; ++i)
    expect("ring receive", i, b[i], (float)(previous * 1000 + (int)i));

  for (size_t i = 0; i < small; ++i) a[i] = (float)(gRank + 7);
  CALL("ncclBroadcast", ncclBroadcast(a, b, small, ncclFloat32, 0, gComm, NULL));
  for (size_t i = 0; i < small; ++i) expect("broadcast", i, b[i], 7.0f);

  ncclComm_t child = NULL;
  CALL("ncclCommSplit", ncclCommSplit(gComm, 0, gRank, &child, NULL));
  for (size_t i = 0; i < small; ++i) a[i] = 1.0f;
  CALL("ncclAllReduce (split)", ncclAllReduce(a, b, small, ncclFloat32, ncclSum, child, NULL));
  for (size_t i = 0; i < small; ++i) expect("split all-reduce", i, b[i], (float)n);
  CALL("ncclCommDestroy (split)", ncclCommDestroy(child));

  /* A clique of two ranks in this process (ncclCommInitAll), driven by
   * this thread: the creation and the group's end run each rank on a
   * thread of its own (interpose/nccl/run_each.h). */
  ncclComm_t clique[2] = {NULL, NULL};
  CALL("ncclCommInitAll", ncclCommInitAll(clique, 2, NULL));
  for (size_t i = 0; i < small; ++i) {
    a[i] = (float)i;
    b[i] = (float)(2 * i);
  }
  CALL("ncclGroupStart (clique)", ncclGroupStart());
  CALL("ncclAllReduce (clique 0)",
       ncclAllReduce(a, a, small, ncclFloat32, ncclSum, clique[0], NULL));
  CALL("ncclAllReduce (clique 1)",
       ncclAllReduce(b, b, small, ncclFloat32, ncclSum, clique[1], NULL));
  CALL("ncclGroupEnd (clique)", ncclGroupEnd());
  for (size_t i = 0; i < small; ++i) {
    expect("clique all-reduce 0", i, a[i], (float)(3 * i));
    expect("clique all-reduce 1", i, b[i], (float)(3 * i));
  }
  for (int k = 0; k < 2; ++k) CALL("ncclCommDestroy (clique)", ncclCommDestroy(clique[k]));

  CALL("ncclCommDestroy", ncclCommDestroy(gComm));
  free(a);
  free(b);
  printf("victim: OK\n");
  return 0;
}

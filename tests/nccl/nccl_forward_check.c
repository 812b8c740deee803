/*
 * Forward mode where the real NCCL loads but has no GPU to run on (a
 * CPU-only host): what the program sees must be the real NCCL's. Run
 * under spcclrun with libspccl_nccl.so preloaded or installed as
 * libnccl.so.2 (tests/nccl/run_nccl_test.sh):
 *
 *   nccl_forward_check ID_DIR REAL_LIBNCCL
 *
 * REAL_LIBNCCL is the real library's path; the program opens it itself
 * (dlopen, RTLD_LOCAL) to ask it directly and compares:
 *  - ncclGetVersion and ncclGetErrorString answer as the real NCCL;
 *  - ncclCommInitRank on every rank returns the real NCCL's own code for
 *    a communicator it cannot make (asked directly with one rank), not
 *    success and not a code of spccl's;
 *  - a collective on a NULL communicator gets the real NCCL's answer.
 * Prints "rank R: PASS (the real NCCL returned CODE)"; exits 77 (skipped)
 * where the real NCCL can make a communicator (a GPU host).
 */
#include <dlfcn.h>
#include <errno.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_check.h"

typedef ncclResult_t (*GetVersionFn)(int*);
typedef const char* (*GetErrorStringFn)(ncclResult_t);
typedef ncclResult_t (*GetUniqueIdFn)(ncclUniqueId*);
typedef ncclResult_t (*InitRankFn)(ncclComm_t*, int, ncclUniqueId, int);
typedef ncclResult_t (*AllReduceFn)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                    ncclComm_t, cudaStream_t);

static void* need(void* handle, const char* name) {
  void* fn = dlsym(handle, name);
  CHECK(fn != NULL, "the real NCCL has no %s", name);
  return fn;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ID_DIR REAL_LIBNCCL\n", argv[0]);
    return 2;
  }
  if (getenv("SPCCL_RANK")) gRank = atoi(getenv("SPCCL_RANK"));
  if (getenv("SPCCL_NRANKS")) gNranks = atoi(getenv("SPCCL_NRANKS"));
  void* real = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  CHECK(real != NULL, "dlopen %s: %s", argv[2], dlerror());
  GetVersionFn realVersion = (GetVersionFn)need(real, "pncclGetVersion");
  GetErrorStringFn realErrorString = (GetErrorStringFn)need(real, "pncclGetErrorString");
  GetUniqueIdFn realUniqueId = (GetUniqueIdFn)need(real, "pncclGetUniqueId");
  InitRankFn realInitRank = (InitRankFn)need(real, "pncclCommInitRank");
  AllReduceFn realAllReduce = (AllReduceFn)need(real, "pncclAllReduce");

  int version = 0, expectedVersion = -1;
  CHECK(ncclGetVersion(&version) == ncclSuccess, "ncclGetVersion");
  CHECK(realVersion(&expectedVersion) == ncclSuccess, "the real ncclGetVersion");
  CHECK(version == expectedVersion, "ncclGetVersion gave %d, the real NCCL %d", version,
        expectedVersion);
  for (int r = 0; r <= (int)ncclNumResults; ++r) {
    const char* text = ncclGetErrorString((ncclResult_t)r);
    CHECK(text != NULL && strcmp(text, realErrorString((ncclResult_t)r)) == 0,
          "ncclGetErrorString(%d) = \"%s\", the real NCCL's \"%s\"", r, text ? text : "(null)",
          realErrorString((ncclResult_t)r));
    CHECK(strstr(text, "spccl") == NULL, "ncclGetErrorString(%d) is spccl's: %s", r, text);
  }

  /* What the real NCCL answers for a one-rank communicator on this host. */
  ncclUniqueId realId;
  CHECK(realUniqueId(&realId) == ncclSuccess, "the real ncclGetUniqueId");
  ncclComm_t direct = NULL;
  const ncclResult_t expected = realInitRank(&direct, 1, realId, 0);
  if (expected == ncclSuccess || expected == ncclInProgress) {
    printf(
        "rank %d: SKIPPED: the real NCCL makes communicators here (a GPU host); this check "
        "is for hosts where it cannot\n",
        gRank);
    return 77;
  }

  ncclUniqueId id = shareId(argv[1], "forward");
  ncclComm_t comm = NULL;
  const ncclResult_t got = ncclCommInitRank(&comm, gNranks, id, gRank);
  CHECK(got == expected, "ncclCommInitRank returned %d (%s), the real NCCL %d (%s)", (int)got,
        ncclGetErrorString(got), (int)expected, realErrorString(expected));
  CHECK(strlen(ncclGetLastError(NULL)) > 0, "no last error after the failed init");
  printf("rank %d: ncclGetLastError: %s\n", gRank, ncclGetLastError(NULL));

  float x = 1.0f;
  const ncclResult_t nullComm = ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, NULL, NULL);
  const ncclResult_t realNullComm = realAllReduce(&x, &x, 1, ncclFloat32, ncclSum, NULL, NULL);
  CHECK(nullComm == realNullComm, "ncclAllReduce(comm NULL) returned %d, the real NCCL %d",
        (int)nullComm, (int)realNullComm);
  printf("rank %d: PASS (the real NCCL returned %d: %s)\n", gRank, (int)got,
         ncclGetErrorString(got));
  return 0;
}

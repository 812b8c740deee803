/*
 * An NCCL program that knows nothing of spccl: it uses nccl.h's API only
 * (host buffers), checks every result against a reference computed
 * locally, and prints "rank R: PASS" at the end. Run one process per rank
 * under spcclrun, with libspccl_nccl.so preloaded or installed as
 * libnccl.so.2 (tests/nccl/run_nccl_test.sh):
 *
 *   nccl_api_check ID_DIR [--replace] [--fake-stream] [--lossy TOLERANCE]
 *
 * The rank and the rank count come from SPCCL_RANK / SPCCL_NRANKS (NCCL
 * has no "init from the environment"); rank 0's ncclGetUniqueId travels to
 * the others in a file under ID_DIR, named after SPCCL_COMM_ID (one per spcclrun job) so that
 * jobs never read each other's ids. --replace: also check what only
 * SPCCL_NCCL_MODE=replace does (fp8 refused, ncclMemAlloc's host memory).
 * --fake-stream: pass a non-NULL stream with host buffers (a process
 * without the CUDA driver has no streams to wait for). --lossy: float
 * results may differ from the reference by TOLERANCE (compressed
 * all-reduce, SPCCL_NCCL_COMPRESS).
 *
 * Built a second time as nccl_api_check_emulated (SPCCL_EMULATED_DEVICE),
 * linked with the emulated CUDA driver of tests/cuda_emulation: the float
 * buffers are then that driver's device memory and every call goes on one
 * of its streams, synchronised after each call before the results are
 * read. That checks the interposer's device path logic in CI; it says
 * nothing about a GPU (tests/gpu/run_torch_shim.sh runs on one).
 */
#include <errno.h>
#include <math.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_check.h"

#ifdef SPCCL_EMULATED_DEVICE
#include "../cuda_emulation/emulated_driver.h"
int cuStreamSynchronize(void* stream); /* the emulated driver's */
#endif

static int gReplace = 0, gNonBlocking = 0;
static double gLossyTolerance = 0;
static cudaStream_t gStream = NULL;

/* Waits for the stream when it is the emulated driver's (the results are
 * read right after each call); nothing otherwise. */
static void settle(void) {
#ifdef SPCCL_EMULATED_DEVICE
  cuStreamSynchronize(gStream);
#endif
}

#define NCCLCHECK(call)                                                                         \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    settle();                                                                                   \
    CHECK(r_ == ncclSuccess, "%s returned %d (%s): %s", #call, (int)r_, ncclGetErrorString(r_), \
          ncclGetLastError(NULL));                                                              \
  } while (0)

/* ---- deterministic inputs ---- */

static uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/* Rank r's element i: zero except at a density fraction of the positions,
 * half of them shared by every rank; values are multiples of 1/8 in
 * [-1, 1], so sums of a few are exact in any order. */
static double valueAt(int rank, size_t i, double density, uint32_t seed) {
  const uint32_t shared = mix((uint32_t)i * 2654435761U ^ seed);
  const uint32_t own = mix(shared ^ (uint32_t)(rank + 1) * 0x9e3779b9U);
  const uint32_t pick = (shared & 1) ? shared : own;
  if ((double)(pick % 100000) >= density * 100000.0) return 0.0;
  return (double)((int)((own >> 8) % 17) - 8) / 8.0;
}

static double sumAt(size_t i, double density, uint32_t seed) {
  double sum = 0;
  for (int r = 0; r < gNranks; ++r) sum += valueAt(r, i, density, seed);
  return sum;
}

static int close_to(double got, double want) {
  return fabs(got - want) <= fmax(1e-6 * fmax(1.0, fabs(want)), gLossyTolerance);
}

/* Float buffers: host memory, or the emulated driver's device memory. */
static float* floats(size_t n) {
#ifdef SPCCL_EMULATED_DEVICE
  float* p = (float*)emuCudaAlloc((n ? n : 1) * sizeof(float), EmuCudaDevice);
  CHECK(p != NULL, "emuCudaAlloc");
  memset(p, 0, (n ? n : 1) * sizeof(float));
#else
  float* p = (float*)calloc(n ? n : 1, sizeof(float));
  CHECK(p != NULL, "calloc");
#endif
  return p;
}

static void release(void* p) {
#ifdef SPCCL_EMULATED_DEVICE
  if (emuCudaFree(p) == 0) return; /* else: host memory */
#endif
  free(p);
}

/* ---- collectives ---- */

static void checkAllReduce(ncclComm_t comm, size_t count, double density, ncclRedOp_t op,
                           int inPlace, uint32_t seed) {
  float* send = floats(count);
  float* recv = inPlace ? send : floats(count);
  for (size_t i = 0; i < count; ++i) send[i] = (float)valueAt(gRank, i, density, seed);
  NCCLCHECK(ncclAllReduce(send, recv, count, ncclFloat32, op, comm, gStream));
  for (size_t i = 0; i < count; ++i) {
    const double want = sumAt(i, density, seed) / (op == ncclAvg ? gNranks : 1);
    CHECK(close_to(recv[i], want),
          "all-reduce count %zu density %g op %d in-place %d: [%zu] = %g, "
          "want %g",
          count, density, (int)op, inPlace, i, recv[i], want);
  }
  if (!inPlace) release(recv);
  release(send);
}

static void checkOtherReductions(ncclComm_t comm) {
  const size_t count = 777;
  double* d = (double*)malloc(count * sizeof(double));
  int32_t* ints = (int32_t*)malloc(count * sizeof(int32_t));
  float* f = floats(count);
  for (size_t i = 0; i < count; ++i) {
    d[i] = valueAt(gRank, i, 1.0, 11);
    ints[i] = (int32_t)(8 * valueAt(gRank, i, 1.0, 12));
    f[i] = (float)valueAt(gRank, i, 1.0, 13);
  }
  NCCLCHECK(ncclAllReduce(d, d, count, ncclFloat64, ncclSum, comm, gStream));
  NCCLCHECK(ncclAllReduce(ints, ints, count, ncclInt32, ncclSum, comm, gStream));
  NCCLCHECK(ncclAllReduce(f, f, count, ncclFloat32, ncclMax, comm, gStream));
  for (size_t i = 0; i < count; ++i) {
    double max = -1e300;
    for (int r = 0; r < gNranks; ++r) max = fmax(max, valueAt(r, i, 1.0, 13));
    CHECK(close_to(d[i], sumAt(i, 1.0, 11)), "f64 sum [%zu]", i);
    CHECK(ints[i] == (int32_t)(8 * sumAt(i, 1.0, 12)), "int32 sum [%zu] = %d", i, ints[i]);
    CHECK(f[i] == (float)max, "f32 max [%zu] = %g, want %g", i, f[i], max);
  }
  release(d);
  release(ints);
  release(f);
}

static void checkRooted(ncclComm_t comm) {
  const size_t count = 3001;
  const int root = gNranks - 1;
  float* send = floats(count);
  float* recv = floats(count);
  for (size_t i = 0; i < count; ++i) send[i] = (float)valueAt(gRank, i, 1.0, 21);
  NCCLCHECK(ncclBroadcast(send, recv, count, ncclFloat32, root, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(recv[i] == (float)valueAt(root, i, 1.0, 21), "broadcast [%zu]", i);
  for (size_t i = 0; i < count; ++i) recv[i] = (float)valueAt(gRank, i, 1.0, 22);
  NCCLCHECK(ncclBcast(recv, count, ncclFloat32, 0, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(recv[i] == (float)valueAt(0, i, 1.0, 22), "bcast [%zu]", i);
  for (size_t i = 0; i < count; ++i) recv[i] = -99.0f;
  NCCLCHECK(
      ncclReduce(send, gRank == 0 ? recv : NULL, count, ncclFloat32, ncclSum, 0, comm, gStream));
  if (gRank == 0)
    for (size_t i = 0; i < count; ++i)
      CHECK(close_to(recv[i], sumAt(i, 1.0, 21)), "reduce [%zu] = %g", i, recv[i]);
  release(send);
  release(recv);
}

static void checkGathers(ncclComm_t comm) {
  const size_t count = 1234, n = (size_t)gNranks, me = (size_t)gRank;
  float* block = floats(count);
  float* all = floats(n * count);
  /* all-gather, out of place and in place */
  for (size_t i = 0; i < count; ++i) block[i] = (float)valueAt(gRank, i, 1.0, 31);
  NCCLCHECK(ncclAllGather(block, all, count, ncclFloat32, comm, gStream));
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      CHECK(all[r * count + i] == (float)valueAt((int)r, i, 1.0, 31), "all-gather [%zu][%zu]", r,
            i);
  for (size_t i = 0; i < n * count; ++i) all[i] = -1.0f;
  memcpy(all + me * count, block, count * sizeof(float));
  NCCLCHECK(ncclAllGather(all + me * count, all, count, ncclFloat32, comm, gStream));
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      CHECK(all[r * count + i] == (float)valueAt((int)r, i, 1.0, 31),
            "in-place all-gather [%zu][%zu]", r, i);
  /* reduce-scatter, out of place and in place */
  for (size_t i = 0; i < n * count; ++i) all[i] = (float)valueAt(gRank, i, 1.0, 32);
  NCCLCHECK(ncclReduceScatter(all, block, count, ncclFloat32, ncclSum, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(close_to(block[i], sumAt(me * count + i, 1.0, 32)), "reduce-scatter [%zu]", i);
  NCCLCHECK(ncclReduceScatter(all, all + me * count, count, ncclFloat32, ncclSum, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(close_to(all[me * count + i], sumAt(me * count + i, 1.0, 32)),
          "in-place reduce-scatter [%zu]", i);
  /* all-to-all: block j goes to rank j */
  float* out = floats(n * count);
  for (size_t i = 0; i < n * count; ++i) all[i] = (float)valueAt(gRank, i, 1.0, 33);
  NCCLCHECK(ncclAlltoAll(all, out, count, ncclFloat32, comm, gStream));
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      CHECK(out[r * count + i] == (float)valueAt((int)r, me * count + i, 1.0, 33),
            "all-to-all [%zu][%zu]", r, i);
  /* gather and scatter at the last rank */
  const int root = gNranks - 1;
  NCCLCHECK(ncclGather(block, out, count, ncclFloat32, root, comm, gStream));
  if (gRank == root)
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i)
        CHECK(close_to(out[r * count + i], sumAt(r * count + i, 1.0, 32)), "gather [%zu][%zu]", r,
              i);
  for (size_t i = 0; i < n * count; ++i) all[i] = (float)valueAt(gRank, i, 1.0, 34);
  NCCLCHECK(ncclScatter(all, block, count, ncclFloat32, root, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(block[i] == (float)valueAt(root, me * count + i, 1.0, 34), "scatter [%zu]", i);
  release(out);
  release(block);
  release(all);
}

/* Send right, receive from the left, in one group (one rank: to itself). */
static void checkSendRecv(ncclComm_t comm) {
  const size_t count = 4099;
  const int right = (gRank + 1) % gNranks, left = (gRank + gNranks - 1) % gNranks;
  float* send = floats(count);
  float* recv = floats(count);
  for (size_t i = 0; i < count; ++i) send[i] = (float)valueAt(gRank, i, 1.0, 41);
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclSend(send, count, ncclFloat32, right, comm, gStream));
  NCCLCHECK(ncclRecv(recv, count, ncclFloat32, left, comm, gStream));
  NCCLCHECK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i)
    CHECK(recv[i] == (float)valueAt(left, i, 1.0, 41), "send/recv [%zu]", i);
  release(send);
  release(recv);
}

/* Several all-reduces (sparse and dense paths) and a send/recv pair in
 * one group: each result as if run alone. */
static void checkGroupedCalls(ncclComm_t comm) {
  const size_t big = 60000, small = 500;
  float* a = floats(big);
  float* b = floats(small);
  float* c = floats(big);
  float* s = floats(small);
  float* r = floats(small);
  for (size_t i = 0; i < big; ++i) a[i] = (float)valueAt(gRank, i, 0.01, 51);
  for (size_t i = 0; i < small; ++i) b[i] = (float)valueAt(gRank, i, 1.0, 52);
  for (size_t i = 0; i < big; ++i) c[i] = (float)valueAt(gRank, i, 1.0, 53);
  for (size_t i = 0; i < small; ++i) s[i] = (float)valueAt(gRank, i, 1.0, 54);
  const int right = (gRank + 1) % gNranks, left = (gRank + gNranks - 1) % gNranks;
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce(a, a, big, ncclFloat32, ncclSum, comm, gStream));
  NCCLCHECK(ncclSend(s, small, ncclFloat32, right, comm, gStream));
  NCCLCHECK(ncclAllReduce(b, b, small, ncclFloat32, ncclSum, comm, gStream));
  NCCLCHECK(ncclRecv(r, small, ncclFloat32, left, comm, gStream));
  NCCLCHECK(ncclAllReduce(c, c, big, ncclFloat32, ncclAvg, comm, gStream));
  NCCLCHECK(ncclGroupEnd());
  for (size_t i = 0; i < big; ++i) {
    CHECK(close_to(a[i], sumAt(i, 0.01, 51)), "grouped sparse all-reduce [%zu]", i);
    CHECK(close_to(c[i], sumAt(i, 1.0, 53) / gNranks), "grouped avg all-reduce [%zu]", i);
  }
  for (size_t i = 0; i < small; ++i) {
    CHECK(close_to(b[i], sumAt(i, 1.0, 52)), "grouped dense all-reduce [%zu]", i);
    CHECK(r[i] == (float)valueAt(left, i, 1.0, 54), "grouped recv [%zu]", i);
  }
  release(a);
  release(b);
  release(c);
  release(s);
  release(r);
}

static void checkPreMulSum(ncclComm_t comm) {
  const size_t count = 50000;
  float* buf = floats(count);
  float scalar = 0.5f;
  ncclRedOp_t op;
  NCCLCHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK((int)op >= (int)ncclNumOps, "a PreMulSum op is %d", (int)op);
  scalar = 100.0f; /* immediate: the value at creation counts */
  for (size_t i = 0; i < count; ++i) buf[i] = (float)valueAt(gRank, i, 0.02, 61);
  NCCLCHECK(ncclAllReduce(buf, buf, count, ncclFloat32, op, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(close_to(buf[i], 0.5 * sumAt(i, 0.02, 61)), "pre-mul-sum [%zu] = %g", i, buf[i]);
  NCCLCHECK(ncclRedOpDestroy(op, comm));
  /* device residence: read at each call (host memory here) */
  ncclRedOp_t late;
  NCCLCHECK(ncclRedOpCreatePreMulSum(&late, &scalar, ncclFloat32, ncclScalarDevice, comm));
  scalar = 2.0f;
  for (size_t i = 0; i < count; ++i) buf[i] = (float)valueAt(gRank, i, 1.0, 62);
  NCCLCHECK(ncclReduce(buf, buf, count, ncclFloat32, late, 0, comm, gStream));
  if (gRank == 0)
    for (size_t i = 0; i < count; ++i)
      CHECK(close_to(buf[i], 2.0 * sumAt(i, 1.0, 62)), "pre-mul-sum reduce [%zu]", i);
  NCCLCHECK(ncclRedOpDestroy(late, comm));
  CHECK(ncclRedOpDestroy(late, comm) == ncclInvalidArgument, "destroying an op twice");
  release(buf);
}

/* Bad arguments fail with NCCL's code on every rank, and the communicator
 * stays usable. */
static void checkErrors(ncclComm_t comm) {
  float buf[64] = {0};
  if (gReplace) {
    CHECK(
        ncclAllReduce(buf, buf, 16, ncclFloat8e4m3, ncclSum, comm, gStream) == ncclInvalidArgument,
        "fp8 all-reduce");
    CHECK(strstr(ncclGetLastError(comm), "Float8e4m3") != NULL, "last error: %s",
          ncclGetLastError(comm));
    CHECK(ncclAllReduce(buf, buf, 16, ncclFloat32, (ncclRedOp_t)77, comm, gStream) ==
              ncclInvalidArgument,
          "all-reduce with op 77");
    CHECK(
        ncclBroadcast(buf, buf, 16, ncclFloat32, gNranks + 3, comm, gStream) == ncclInvalidArgument,
        "broadcast with root out of range");
    CHECK(ncclMemFree(buf) == ncclInvalidArgument, "ncclMemFree of a stack buffer");
    int ignored = 0;
    CHECK(ncclCommCount(NULL, &ignored) == ncclInvalidArgument, "ncclCommCount(NULL)");
    CHECK(strlen(ncclGetLastError(NULL)) > 0, "no last error");
  }
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  for (int r = 0; r < (int)ncclNumResults; ++r)
    CHECK(ncclGetErrorString((ncclResult_t)r) != NULL, "error string of %d", r);
  CHECK(strstr(ncclGetErrorString(ncclInvalidArgument), "invalid argument") != NULL,
        "error string: %s", ncclGetErrorString(ncclInvalidArgument));
  ncclResult_t async = ncclInternalError;
  NCCLCHECK(ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess, "async error %d", (int)async);
  checkAllReduce(comm, 1000, 1.0, ncclSum, 0, 71);
}

/* NCCL's device API (nccl_device/core.h, NCCL 2.28 on), declared here by
 * its C ABI: that header is written for C++ and CUDA. */
typedef struct {
  int nRanks, rank, stride;
} TeamAbi;
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm);
TeamAbi ncclTeamWorld(ncclComm_t comm);
TeamAbi ncclTeamLsa(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, TeamAbi team, int rank);

/* Replace mode has no device communicators: creating one fails with
 * ncclInvalidUsage saying why (not a crash in the program's NCCL with
 * spccl's handle); the Team API describes the world, each rank its own
 * LSA team. */
static void checkDeviceApi(ncclComm_t comm) {
  if (!gReplace) return;
  unsigned char reqs[512] = {0}, devComm[4096] = {0};
  CHECK(ncclDevCommCreate(comm, reqs, devComm) == ncclInvalidUsage, "ncclDevCommCreate");
  CHECK(strstr(ncclGetLastError(comm), "device API") != NULL, "last error: %s",
        ncclGetLastError(comm));
  CHECK(ncclDevCommCreate(NULL, reqs, devComm) == ncclInvalidArgument, "ncclDevCommCreate(NULL)");
  TeamAbi world = ncclTeamWorld(comm), lsa = ncclTeamLsa(comm);
  CHECK(world.nRanks == gNranks && world.rank == gRank && world.stride == 1,
        "world team {%d, %d, %d}", world.nRanks, world.rank, world.stride);
  CHECK(lsa.nRanks == 1 && lsa.rank == 0 && lsa.stride == 1, "LSA team {%d, %d, %d}", lsa.nRanks,
        lsa.rank, lsa.stride);
  for (int r = 0; r < gNranks; ++r)
    CHECK(ncclTeamRankToWorld(comm, world, r) == r, "world rank of %d", r);
}

/* Returns once every rank has entered it: an all-reduce's result holds
 * every rank's contribution. */
static void barrier(ncclComm_t world) {
  int one = 1;
  NCCLCHECK(ncclAllReduce(&one, &one, 1, ncclInt32, ncclSum, world, gStream));
  CHECK(one == gNranks, "barrier: %d of %d ranks", one, gNranks);
}

static void checkSplit(ncclComm_t world) {
  const int color = gNranks >= 3 && gRank == gNranks - 1 ? NCCL_SPLIT_NOCOLOR : gRank % 2;
  ncclComm_t half = (ncclComm_t)1;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "half";
  NCCLCHECK(ncclCommSplit(world, color, -gRank, &half, &config));
  if (color == NCCL_SPLIT_NOCOLOR) {
    CHECK(half == NULL, "NOCOLOR gave a communicator");
    barrier(world);
    return;
  }
  int members = 0, rank = -1, count = -1;
  for (int r = 0; r < gNranks; ++r)
    if (r % 2 == color && !(gNranks >= 3 && r == gNranks - 1)) ++members;
  NCCLCHECK(ncclCommCount(half, &count));
  NCCLCHECK(ncclCommUserRank(half, &rank));
  CHECK(count == members, "split count %d, want %d", count, members);
  int above = 0; /* key -rank: higher old ranks first */
  for (int r = gRank + 1; r < gNranks; ++r)
    if (r % 2 == color && !(gNranks >= 3 && r == gNranks - 1)) ++above;
  CHECK(rank == above, "split rank %d, want %d", rank, above);
  int value = gRank + 1, sum = 0;
  for (int r = 0; r < gNranks; ++r)
    if (r % 2 == color && !(gNranks >= 3 && r == gNranks - 1)) sum += r + 1;
  NCCLCHECK(ncclAllReduce(&value, &value, 1, ncclInt32, ncclSum, half, gStream));
  CHECK(value == sum, "split all-reduce %d, want %d", value, sum);
  /* spccl's revoke reaches every rank and stops their calls in flight: not
   * before each has its result of the all-reduce above */
  barrier(world);
  /* revoked: later calls fail, destroy works */
  NCCLCHECK(ncclCommRevoke(half, NCCL_REVOKE_DEFAULT));
  CHECK(ncclAllReduce(&value, &value, 1, ncclInt32, ncclSum, half, gStream) == ncclInvalidUsage,
        "all-reduce on a revoked communicator");
  NCCLCHECK(ncclCommDestroy(half));
}

/* The last rank leaves; the others shrink the communicator without it. */
static void checkShrink(ncclComm_t world) {
  if (gNranks < 2 || gRank == gNranks - 1) return;
  int excluded = gNranks - 1;
  ncclComm_t rest = NULL;
  NCCLCHECK(ncclCommShrink(world, &excluded, 1, &rest, NULL, NCCL_SHRINK_DEFAULT));
  int count = -1, rank = -1;
  NCCLCHECK(ncclCommCount(rest, &count));
  NCCLCHECK(ncclCommUserRank(rest, &rank));
  CHECK(count == gNranks - 1 && rank == gRank, "shrunk: rank %d of %d", rank, count);
  double value = gRank;
  NCCLCHECK(ncclAllReduce(&value, &value, 1, ncclFloat64, ncclSum, rest, gStream));
  CHECK(value == (double)(gNranks - 1) * (gNranks - 2) / 2, "shrunk all-reduce %g", value);
  NCCLCHECK(ncclCommDestroy(rest));
}

/* A clique of two ranks in this process, driven by this thread: with
 * ncclCommInitAll (then split in one group), then with ncclCommInitRank
 * twice inside a group. */
static void checkOneProcessClique(void) {
  ncclComm_t comms[2] = {NULL, NULL};
  NCCLCHECK(ncclCommInitAll(comms, 2, NULL));
  ncclComm_t halves[2] = {NULL, NULL};
  NCCLCHECK(ncclGroupStart());
  for (int k = 0; k < 2; ++k) NCCLCHECK(ncclCommSplit(comms[k], 0, 1 - k, &halves[k], NULL));
  NCCLCHECK(ncclGroupEnd());
  for (int k = 0; k < 2; ++k) {
    int rank = -1;
    NCCLCHECK(ncclCommUserRank(halves[k], &rank));
    CHECK(rank == 1 - k, "clique split: rank %d of slot %d", rank, k);
    NCCLCHECK(ncclCommDestroy(halves[k]));
  }
  for (int round = 0; round < 2; ++round) {
    float a[300], b[300];
    for (int i = 0; i < 300; ++i) {
      a[i] = (float)i;
      b[i] = (float)(2 * i);
    }
    NCCLCHECK(ncclGroupStart());
    NCCLCHECK(ncclAllReduce(a, a, 300, ncclFloat32, ncclSum, comms[0], gStream));
    NCCLCHECK(ncclAllReduce(b, b, 300, ncclFloat32, ncclSum, comms[1], gStream));
    NCCLCHECK(ncclGroupEnd());
    for (int i = 0; i < 300; ++i)
      CHECK(a[i] == (float)(3 * i) && b[i] == (float)(3 * i), "clique all-reduce [%d]: %g %g", i,
            a[i], b[i]);
    for (int k = 0; k < 2; ++k) NCCLCHECK(ncclCommDestroy(comms[k]));
    if (round == 1) break;
    ncclUniqueId id;
    NCCLCHECK(ncclGetUniqueId(&id));
    NCCLCHECK(ncclGroupStart());
    for (int k = 0; k < 2; ++k) NCCLCHECK(ncclCommInitRank(&comms[k], 2, id, k));
    NCCLCHECK(ncclGroupEnd());
    int rank = -1;
    NCCLCHECK(ncclCommUserRank(comms[1], &rank));
    CHECK(rank == 1, "grouped init: rank %d", rank);
  }
}

static void checkMemoryAndRegistration(ncclComm_t comm) {
  const size_t count = 1024;
  void* mem = NULL;
  NCCLCHECK(ncclMemAlloc(&mem, count * sizeof(float)));
  float* f = (float*)mem;
  for (size_t i = 0; i < count; ++i) f[i] = (float)valueAt(gRank, i, 1.0, 81);
  void* handle = NULL;
  NCCLCHECK(ncclCommRegister(comm, mem, count * sizeof(float), &handle));
  ncclWindow_t win = NULL;
  NCCLCHECK(ncclCommWindowRegister(comm, mem, count * sizeof(float), &win, NCCL_WIN_DEFAULT));
  NCCLCHECK(ncclAllReduce(f, f, count, ncclFloat32, ncclSum, comm, gStream));
  for (size_t i = 0; i < count; ++i)
    CHECK(close_to(f[i], sumAt(i, 1.0, 81)), "ncclMemAlloc'd [%zu]", i);
  NCCLCHECK(ncclCommWindowDeregister(comm, win));
  NCCLCHECK(ncclCommDeregister(comm, handle));
  NCCLCHECK(ncclMemFree(mem));
}

static void checkSimulatedGroup(ncclComm_t comm) {
  float buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce(buf, buf, 8, ncclFloat32, ncclSum, comm, gStream));
  NCCLCHECK(ncclGroupSimulateEnd(&sim));
  CHECK(buf[7] == 8.0f, "a simulated group ran its all-reduce");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ID_DIR [--replace] [--fake-stream] [--nonblocking]\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--replace") == 0) gReplace = 1;
    if (strcmp(argv[i], "--fake-stream") == 0) gStream = (cudaStream_t)(uintptr_t)0x10;
    if (strcmp(argv[i], "--nonblocking") == 0) gNonBlocking = 1;
    if (strcmp(argv[i], "--lossy") == 0 && i + 1 < argc) gLossyTolerance = atof(argv[++i]);
  }
#ifdef SPCCL_EMULATED_DEVICE
  emuCudaSetCurrent(1);
  gStream = (cudaStream_t)emuCudaStreamCreate();
#endif
  if (getenv("SPCCL_RANK")) gRank = atoi(getenv("SPCCL_RANK"));
  if (getenv("SPCCL_NRANKS")) gNranks = atoi(getenv("SPCCL_NRANKS"));
  int version = 0;
  NCCLCHECK(ncclGetVersion(&version));
  CHECK(version >= 22800, "version %d", version);

  ncclUniqueId id = shareId(argv[1], "world");
  ncclComm_t world = NULL;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "world";
  if (gNonBlocking) {
    /* NCCL's contract: ncclInProgress at once, then poll ncclCommGetAsyncError.
     * Only world's creation: the splits below reuse `config`, blocking. */
    ncclConfig_t nonBlocking = config;
    nonBlocking.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&world, gNranks, id, gRank, &nonBlocking);
    CHECK(r == ncclInProgress || r == ncclSuccess, "non-blocking init returned %d (%s): %s", (int)r,
          ncclGetErrorString(r), ncclGetLastError(NULL));
    CHECK(world != NULL, "non-blocking init gave no communicator");
    int polls = 0;
    ncclResult_t state = ncclInProgress;
    for (; polls < 30000 && state == ncclInProgress; ++polls) {
      NCCLCHECK(ncclCommGetAsyncError(world, &state));
      if (state == ncclInProgress) usleep(1000);
    }
    CHECK(state == ncclSuccess, "non-blocking init ended with %d (%s) after %d polls: %s",
          (int)state, ncclGetErrorString(state), polls, ncclGetLastError(world));
    printf("rank %d: non-blocking init returned %d, ready after %d polls\n", gRank, (int)r, polls);
  } else {
    NCCLCHECK(ncclCommInitRankConfig(&world, gNranks, id, gRank, &config));
  }
  int count = -1, rank = -1, device = -2;
  NCCLCHECK(ncclCommCount(world, &count));
  NCCLCHECK(ncclCommUserRank(world, &rank));
  NCCLCHECK(ncclCommCuDevice(world, &device));
  CHECK(count == gNranks && rank == gRank, "rank %d of %d", rank, count);

  /* all-reduce: sparse (1 %) and dense data, below and above
   * SPCCL_INTERPOSE_MIN_BYTES (64 KiB: 16384 floats), sum and avg */
  const size_t counts[] = {1000, 100000};
  const double densities[] = {0.01, 1.0};
  for (int c = 0; c < 2; ++c)
    for (int d = 0; d < 2; ++d)
      for (int op = 0; op < 2; ++op)
        for (int inPlace = 0; inPlace < 2; ++inPlace)
          checkAllReduce(world, counts[c], densities[d], op ? ncclAvg : ncclSum, inPlace,
                         (uint32_t)(c * 8 + d * 4 + op * 2 + inPlace));
  checkOtherReductions(world);
  checkRooted(world);
  checkGathers(world);
  checkSendRecv(world);
  checkGroupedCalls(world);
  checkPreMulSum(world);
  checkErrors(world);
  checkDeviceApi(world);
  checkSplit(world);
  checkShrink(world);
  checkMemoryAndRegistration(world);
  checkSimulatedGroup(world);
  checkOneProcessClique();
  NCCLCHECK(ncclCommFinalize(world));
  NCCLCHECK(ncclCommDestroy(world));
  printf("rank %d: PASS (%d checks)\n", gRank, gChecks);
  return 0;
}

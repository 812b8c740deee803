/*
 * The program tests/faults/alloc_failure.sh fails allocations under: C, so
 * that its own code allocates nothing but its checked buffers. Dense,
 * sparse and compressed all-reduces, a broadcast and a group of sends,
 * each checked. Exit 0: every call succeeded with the right result; 3: a
 * call failed with an error (printed); 4: a wrong result (a failure).
 */
#include <math.h>
#include <spccl.h>
#include <stdio.h>
#include <stdlib.h>

void fail_alloc_arm(void) __attribute__((weak));

static spcclComm_t gComm;

static void failed(const char* what, spcclResult_t r) {
  printf("victim: %s failed: %s: %s\n", what, spcclGetErrorString(r), spcclGetLastError(gComm));
  exit(3);
}

#define CALL(what, call)                      \
  do {                                        \
    spcclResult_t r_ = (call);                \
    if (r_ != spcclSuccess) failed(what, r_); \
  } while (0)

int main(void) {
  if (fail_alloc_arm != NULL) fail_alloc_arm();
  const size_t count = 65536;
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  if (a == NULL || b == NULL) {
    printf("victim: malloc failed\n");
    return 3;
  }
  CALL("spcclCommInitFromEnv", spcclCommInitFromEnv(&gComm, NULL));
  int rank = 0, n = 1;
  spcclCommUserRank(gComm, &rank);
  spcclCommCount(gComm, &n);
  for (size_t i = 0; i < count; ++i) a[i] = (i % 100 == (size_t)rank) ? (float)(i % 7 + 1) : 0.0f;
  CALL("spcclSparseAllReduce",
       spcclSparseAllReduce(a, b, count, spcclFloat32, spcclSum, gComm, NULL));
  for (size_t i = 0; i < count; ++i) {
    const float want = (i % 100 < (size_t)n) ? (float)(i % 7 + 1) : 0.0f;
    if (b[i] != want) {
      printf("victim: sparse [%zu] = %g, want %g\n", i, b[i], want);
      return 4;
    }
  }
  for (size_t i = 0; i < count; ++i) a[i] = (float)(rank + 1);
  CALL("spcclAllReduce", spcclAllReduce(a, b, count, spcclFloat32, spcclSum, gComm, NULL));
  if (b[count - 1] != (float)(n * (n + 1) / 2)) return 4;
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  CALL("spcclCompressedAllReduce",
       spcclCompressedAllReduce(a, b, count, spcclFloat32, spcclSum, &cfg, gComm, NULL));
  if (fabsf(b[0] - (float)(n * (n + 1) / 2)) > 0.5f) return 4;
  CALL("spcclBroadcast", spcclBroadcast(a, b, count, spcclFloat32, 0, gComm, NULL));
  if (b[5] != 1.0f) return 4;
  CALL("spcclCommDestroy", spcclCommDestroy(gComm));
  free(a);
  free(b);
  printf("victim: OK\n");
  return 0;
}

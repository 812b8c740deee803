/* A plain-C program on spccl's public API: every rank contributes its rank
 * number and checks the sum. Run it with `spcclrun -n 4 ./allreduce`, under
 * `mpirun` (with SPCCL_COMM_ID set) or torchrun. Being C, it also proves
 * that include/spccl.h has no C++ in it. */
#include <spccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    spcclResult_t res_ = (call);                                               \
    if (res_ != spcclSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, spcclGetErrorString(res_), \
              spcclGetLastError(comm));                                        \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  spcclComm_t comm = NULL;
  int rank = 0, nranks = 0;
  size_t i, count = 1 << 20;
  float* data;
  CHECK(spcclCommInitFromEnv(&comm, NULL));
  CHECK(spcclCommUserRank(comm, &rank));
  CHECK(spcclCommCount(comm, &nranks));
  data = malloc(count * sizeof(float));
  for (i = 0; i < count; ++i) data[i] = (float)rank;
  CHECK(spcclAllReduce(data, data, count, spcclFloat32, spcclSum, comm, NULL));
  for (i = 0; i < count; ++i) {
    if (data[i] != (float)(nranks * (nranks - 1) / 2)) {
      fprintf(stderr, "rank %d: element %zu is %f\n", rank, i, data[i]);
      return 1;
    }
  }
  if (rank == 0) printf("allreduce example: %d ranks, %zu floats, sum correct\n", nranks, count);
  free(data);
  CHECK(spcclCommDestroy(comm));
  return 0;
}

/* An ordinary MPI program (it knows nothing of spccl): MPI_Allreduce of
 * many types, sizes and densities, in place and not, on MPI_COMM_WORLD and
 * on a split communicator, plus calls an interposer must leave to MPI (a
 * user op, a derived type, MPI_MAX, MPI_SHORT). Every rank checks its
 * results against a reference it computes itself, and can dump them so
 * that a run with LD_PRELOAD=libspccl_mpi_interpose.so can be compared with
 * one without.
 *
 *   mpi_allreduce_check [--dump PREFIX]     (PREFIX.rankR: the results of the
 *                                            communicators where R has rank 0)
 *   mpi_allreduce_check --compare A B       (no MPI; exit 1 on a difference)
 *
 * Tolerance: integers exact; floats (all inputs positive) within
 * 2 * n * epsilon * |result| of the double-precision reference, and two
 * runs within twice that of each other: any summation order of n positive
 * terms stays within (n - 1) * epsilon * sum.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_inputs.h"

typedef enum { K_F32, K_F64, K_I8, K_U8, K_I16, K_I32, K_U32, K_I64, K_U64 } Kind;

typedef struct {
  const char* name;
  MPI_Datatype type;
  Kind kind;
} TypeCase;

static size_t kind_size(Kind k) {
  static const size_t sizes[] = {4, 8, 1, 1, 2, 4, 4, 8, 8};
  return sizes[k];
}
static int kind_is_float(Kind k) { return k == K_F32 || k == K_F64; }
static int kind_is_signed(Kind k) { return k == K_I8 || k == K_I16 || k == K_I32 || k == K_I64; }
static double kind_epsilon(Kind k) {
  return k == K_F32 ? FLT_EPSILON : k == K_F64 ? DBL_EPSILON : 0;
}

static void set_elem(Kind k, void* buf, size_t i, double v) {
  switch (k) {
    case K_F32:
      ((float*)buf)[i] = (float)v;
      break;
    case K_F64:
      ((double*)buf)[i] = v;
      break;
    case K_I8:
      ((int8_t*)buf)[i] = (int8_t)v;
      break;
    case K_U8:
      ((uint8_t*)buf)[i] = (uint8_t)v;
      break;
    case K_I16:
      ((int16_t*)buf)[i] = (int16_t)v;
      break;
    case K_I32:
      ((int32_t*)buf)[i] = (int32_t)v;
      break;
    case K_U32:
      ((uint32_t*)buf)[i] = (uint32_t)v;
      break;
    case K_I64:
      ((int64_t*)buf)[i] = (int64_t)v;
      break;
    case K_U64:
      ((uint64_t*)buf)[i] = (uint64_t)v;
      break;
  }
}

static double get_elem(Kind k, const void* buf, size_t i) {
  switch (k) {
    case K_F32:
      return ((const float*)buf)[i];
    case K_F64:
      return ((const double*)buf)[i];
    case K_I8:
      return ((const int8_t*)buf)[i];
    case K_U8:
      return ((const uint8_t*)buf)[i];
    case K_I16:
      return ((const int16_t*)buf)[i];
    case K_I32:
      return ((const int32_t*)buf)[i];
    case K_U32:
      return ((const uint32_t*)buf)[i];
    case K_I64:
      return (double)((const int64_t*)buf)[i];
    case K_U64:
      return (double)((const uint64_t*)buf)[i];
  }
  return 0;
}

/* 1 when a and b agree for kind k summed over nranks (see the header). */
static int values_agree(Kind k, double a, double b, int nranks, double slack) {
  if (!kind_is_float(k)) return a == b;
  return fabs(a - b) <= slack * 2.0 * nranks * kind_epsilon(k) * fmax(fabs(a), fabs(b));
}

/* ---- dumps ---- */
typedef struct {
  char name[120];
  int32_t kind;
  int32_t nranks;
  int64_t count;
} RecordHeader;

static FILE* g_dump;

static void dump_result(const char* name, Kind k, int nranks, const void* buf, size_t count) {
  if (!g_dump) return;
  RecordHeader h;
  memset(&h, 0, sizeof(h));
  snprintf(h.name, sizeof(h.name), "%s", name);
  h.kind = (int32_t)k;
  h.nranks = nranks;
  h.count = (int64_t)count;
  if (fwrite(&h, sizeof(h), 1, g_dump) != 1 || fwrite(buf, kind_size(k), count, g_dump) != count) {
    fprintf(stderr, "mpi_allreduce_check: cannot write the dump\n");
    exit(3);
  }
}

static int compare_dumps(const char* path_a, const char* path_b) {
  FILE* a = fopen(path_a, "rb");
  FILE* b = fopen(path_b, "rb");
  if (!a || !b) {
    fprintf(stderr, "compare: cannot open %s\n", !a ? path_a : path_b);
    return 2;
  }
  int records = 0, differences = 0;
  RecordHeader ha, hb;
  for (;;) {
    const size_t ra = fread(&ha, sizeof(ha), 1, a), rb = fread(&hb, sizeof(hb), 1, b);
    if (ra != rb) {
      fprintf(stderr, "compare: %s and %s hold different numbers of results\n", path_a, path_b);
      return 1;
    }
    if (ra == 0) break;
    if (strcmp(ha.name, hb.name) || ha.kind != hb.kind || ha.count != hb.count) {
      fprintf(stderr, "compare: result %d is %s in %s but %s in %s\n", records, ha.name, path_a,
              hb.name, path_b);
      return 1;
    }
    const Kind k = (Kind)ha.kind;
    const size_t n = (size_t)ha.count, bytes = n * kind_size(k);
    char* da = malloc(bytes ? bytes : 1);
    char* db = malloc(bytes ? bytes : 1);
    if (fread(da, 1, bytes, a) != bytes || fread(db, 1, bytes, b) != bytes) {
      fprintf(stderr, "compare: %s is truncated\n", ha.name);
      return 1;
    }
    for (size_t i = 0; i < n; ++i) {
      const double x = get_elem(k, da, i), y = get_elem(k, db, i);
      if (!values_agree(k, x, y, ha.nranks, 2.0)) {
        if (differences < 5)
          fprintf(stderr, "compare: %s element %zu: %.17g vs %.17g\n", ha.name, i, x, y);
        ++differences;
      }
    }
    free(da);
    free(db);
    ++records;
  }
  fclose(a);
  fclose(b);
  printf("compare: %d results, %d differing elements (%s vs %s)\n", records, differences, path_a,
         path_b);
  return differences ? 1 : 0;
}

/* ---- the cases ---- */
static int g_wrong; /* wrong elements on this rank */
static int g_calls;

static void user_sum_float(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((float*)inout)[i] += ((float*)in)[i];
}

/* For the derived pair-of-int type (MPI_SUM is defined on predefined types only). */
static void user_sum_int_pairs(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < 2 * *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

typedef struct {
  MPI_Comm comm;
  const char* comm_name;
  uint64_t seed;
  MPI_Datatype type; /* what MPI_Allreduce is given */
  int count;         /* in units of type */
  Kind kind;         /* the elements, elements_per_item per item of type */
  int elements_per_item;
  MPI_Op op;
  int op_is_max;
  double density;
  int in_place;
  const char* label;
} Case;

static void run_case(const Case* c) {
  int rank, nranks;
  MPI_Comm_rank(c->comm, &rank);
  MPI_Comm_size(c->comm, &nranks);
  const size_t n = (size_t)c->count * (size_t)c->elements_per_item;
  const size_t bytes = (n ? n : 1) * kind_size(c->kind);
  char* send = calloc(1, bytes);
  char* recv = calloc(1, bytes);
  char* mine = c->in_place ? recv : send;
  const int is_float = kind_is_float(c->kind), is_signed = kind_is_signed(c->kind);
  for (size_t i = 0; i < n; ++i)
    if (input_nonzero(c->seed, rank, i, c->density))
      set_elem(c->kind, mine, i, input_value(c->seed, rank, i, is_float, is_signed));
  const int rc =
      MPI_Allreduce(c->in_place ? MPI_IN_PLACE : send, recv, c->count, c->type, c->op, c->comm);
  ++g_calls;
  char name[120];
  snprintf(name, sizeof(name), "%s/%s/n%d/d%g/%s", c->comm_name, c->label, c->count, c->density,
           c->in_place ? "inplace" : "separate");
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: %s: MPI_Allreduce returned %d\n", rank, name, rc);
    g_wrong += (int)n + 1;
  }
  int wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    double want = c->op_is_max ? -INFINITY : 0;
    for (int r = 0; r < nranks; ++r) {
      const double v = input_nonzero(c->seed, r, i, c->density)
                           ? input_value(c->seed, r, i, is_float, is_signed)
                           : 0;
      want = c->op_is_max ? fmax(want, v) : want + v;
    }
    const double got = get_elem(c->kind, recv, i);
    if (!values_agree(c->kind, got, want, nranks, 1.0)) {
      if (wrong < 3)
        fprintf(stderr, "rank %d: %s element %zu: got %.17g, want %.17g\n", rank, name, i, got,
                want);
      ++wrong;
    }
  }
  g_wrong += wrong;
  if (rank == 0)
    dump_result(name, c->kind, nranks, recv, n); /* results are the same on every rank */
  free(send);
  free(recv);
}

static void routed_cases(MPI_Comm comm, const char* comm_name, uint64_t seed_base) {
  const TypeCase types[] = {
      {"float", MPI_FLOAT, K_F32},
      {"double", MPI_DOUBLE, K_F64},
      {"int", MPI_INT, K_I32},
      {"unsigned", MPI_UNSIGNED, K_U32},
      {"long", MPI_LONG, sizeof(long) == 8 ? K_I64 : K_I32},
      {"long_long", MPI_LONG_LONG, K_I64},
      {"uint64", MPI_UINT64_T, K_U64},
      {"int8", MPI_INT8_T, K_I8},
      {"uint8", MPI_UINT8_T, K_U8},
  };
  const int counts[] = {0, 1, 1000, 20000, 200000};
  const double densities[] = {0.0, 0.01, 1.0};
  int index = 0;
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
    for (size_t s = 0; s < sizeof(counts) / sizeof(counts[0]); ++s)
      for (size_t d = 0; d < sizeof(densities) / sizeof(densities[0]); ++d, ++index) {
        const Case c = {comm,
                        comm_name,
                        seed_base + (uint64_t)index,
                        types[t].type,
                        counts[s],
                        types[t].kind,
                        1,
                        MPI_SUM,
                        0,
                        densities[d],
                        index % 2,
                        types[t].name};
        run_case(&c);
      }
}

/* Calls an interposer must pass through untouched. */
static void pass_through_cases(MPI_Comm comm, const char* comm_name, uint64_t seed) {
  MPI_Op user_op;
  MPI_Op_create(user_sum_float, 1, &user_op);
  const Case user = {comm, comm_name, seed, MPI_FLOAT, 100000, K_F32,
                     1,    user_op,   0,    0.01,      0,      "user-op-float"};
  run_case(&user);
  MPI_Op_free(&user_op);

  MPI_Datatype pair;
  MPI_Op pair_sum;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Op_create(user_sum_int_pairs, 1, &pair_sum);
  const Case derived = {comm, comm_name, seed + 1, pair, 50000, K_I32,
                        2,    pair_sum,  0,        0.01, 1,     "derived-2int"};
  run_case(&derived);
  MPI_Op_free(&pair_sum);
  MPI_Type_free(&pair);

  const Case max = {comm, comm_name, seed + 2, MPI_FLOAT, 100000, K_F32,
                    1,    MPI_MAX,   1,        0.01,      0,      "max-float"};
  run_case(&max);
  const Case shorts = {comm, comm_name, seed + 3, MPI_SHORT, 100000, K_I16,
                       1,    MPI_SUM,   0,        0.01,      1,      "short"};
  run_case(&shorts);
}

int main(int argc, char** argv) {
  if (argc == 4 && !strcmp(argv[1], "--compare")) return compare_dumps(argv[2], argv[3]);
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc == 3 && !strcmp(argv[1], "--dump")) {
    char path[4096];
    snprintf(path, sizeof(path), "%s.rank%d", argv[2], rank);
    g_dump = fopen(path, "wb");
    if (!g_dump) {
      fprintf(stderr, "mpi_allreduce_check: cannot create %s\n", path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } else if (argc != 1) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce_check [--dump PREFIX] | --compare A B\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  routed_cases(MPI_COMM_WORLD, "world", 1000);
  pass_through_cases(MPI_COMM_WORLD, "world", 5000);
  MPI_Comm half; /* even and odd ranks */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  routed_cases(half, rank % 2 ? "odd" : "even", 2000 + (uint64_t)(rank % 2) * 500);
  pass_through_cases(half, rank % 2 ? "odd" : "even", 6000);
  MPI_Comm_free(&half);

  int worst = 0;
  MPI_Allreduce(&g_wrong, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("mpi_allreduce_check: %d ranks, %d calls per rank, %s\n", nranks, g_calls,
           worst ? "WRONG RESULTS" : "all results correct");
  if (g_dump) fclose(g_dump);
  MPI_Finalize();
  return worst ? 1 : 0;
}

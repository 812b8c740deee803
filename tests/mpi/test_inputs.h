/* Deterministic all-reduce inputs for the MPI interposer tests: every rank
 * can rebuild every other rank's input, so each checks its result against a
 * reference it computes itself. Sparse inputs follow the benchmark's shape:
 * half of each rank's non-zeros at positions shared by all ranks, half at
 * its own. Floats are positive, so |sum| is the sum of magnitudes and the
 * float tolerance below bounds any summation order. */
#ifndef SPCCL_TEST_MPI_INPUTS_H_
#define SPCCL_TEST_MPI_INPUTS_H_

#include <stdint.h>

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* Uniform in [0, 1) from (seed, a, b). */
static inline double unit_hash(uint64_t seed, uint64_t a, uint64_t b) {
  return (double)(mix64(seed * 0x9e3779b97f4a7c15ULL ^ mix64(a * 0x632be59bd9b4e019ULL ^ b)) >>
                  11) /
         9007199254740992.0;
}

/* Is element i of `rank`'s input non-zero? density d: d/2 shared + d/2 own. */
static inline int input_nonzero(uint64_t seed, int rank, uint64_t i, double density) {
  if (density >= 1.0) return 1;
  return unit_hash(seed, 0xffffffffu, i) < density / 2 ||
         unit_hash(seed, (uint64_t)rank, i) < density / 2;
}

/* The value of a non-zero element: an integer in [1, 20] for unsigned
 * types, [-20, 20] without 0 for signed ones (sums of <= 8 ranks fit every
 * type, int8 included), or a float in [0.5, 1.5). */
static inline double input_value(uint64_t seed, int rank, uint64_t i, int is_float, int is_signed) {
  const double u = unit_hash(seed ^ 0x5bd1e995u, (uint64_t)rank, i);
  if (is_float) return 0.5 + u;
  const int magnitude = 1 + (int)(u * 20);
  if (!is_signed) return magnitude;
  return unit_hash(seed ^ 0x1b873593u, (uint64_t)rank, i) < 0.5 ? -magnitude : magnitude;
}

#endif

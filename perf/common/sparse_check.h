// How the sparse benchmark judges a result against the dense all-reduce of
// the same inputs (docs/algorithms.md 2: equal exactly for integers, up to
// floating-point reassociation for floats, bitwise identical on all ranks).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spccl.h"

namespace spccl::perf {

struct MismatchRule {
  bool bitwise = true;  // every byte equal
  // Otherwise |got - want| may be up to
  //   relative * |want| + absoluteFactor * absoluteSums[i]
  // (absoluteSums: Σ over ranks of |input|, or null).
  double relative = 0.0;
  const double* absoluteSums = nullptr;
  double absoluteFactor = 0.0;
};

// The rule for a result of `type` and `op` over nranks: bitwise for
// integers and for exact inputs summed; a few roundings for averages of
// exact inputs; reassociation of n terms, (n + 1) unit roundoffs of
// Σ|x| (Higham, "Accuracy and Stability of Numerical Algorithms", §4.2),
// for other floating-point inputs, which then need absoluteSums.
MismatchRule mismatchRuleFor(spcclDataType_t type, spcclRedOp_t op, int nranks, bool exactInputs,
                             const double* absoluteSums);

// Elements of got (count of `type`) that break the rule against want; a
// NaN in got always does.
int64_t countMismatches(spcclDataType_t type, size_t count, const void* got, const void* want,
                        const MismatchRule& rule);

// FNV-1a of the bytes: compared across ranks for bitwise identity.
uint64_t contentHash(const void* bytes, size_t size);

// Elements that are not zero (-0.0 counts as zero).
size_t countNonZeros(spcclDataType_t type, size_t count, const void* buffer);

}  // namespace spccl::perf

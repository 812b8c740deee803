// The numbers of one sparse table row: the sparse all-reduce at one size,
// what the library's planner reported for it, and the dense all-reduce of
// the same inputs for comparison.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/perf_result.h"
#include "spccl.h"

namespace spccl::perf {

// One rank's input for a row: dense, zeros included.
struct SparseInput {
  spcclDataType_t type;
  size_t count;
  const void* data;
  size_t nonZeros;  // this rank's
  // Whether every sum is exact in the type (generated small integers, or
  // integer types): the check then demands bitwise equality with the dense
  // all-reduce, else equality up to reassociation (docs/algorithms.md 2).
  bool exact;
  double overlap;  // requested -O; < 0 when not known (replayed input)
};

struct SparseSizeResult {
  size_t bytes = 0;  // count * element size, as all_reduce_perf's size column
  size_t count = 0;
  spcclDataType_t type = spcclFloat32;
  const char* opName = "";
  double density = 0.0;  // mean over ranks of the local non-zero fraction
  double overlap = -1.0;
  double gamma = 0.0;  // result non-zeros / mean local non-zeros (docs/algorithms.md, Notation)
  uint64_t tag = 0;

  // From spcclSparseGetStats after the timed loop.
  std::string algorithm;  // the chosen one's name; "mixed" when ranks disagree
  std::string reason;     // rank 0's
  std::array<double, spcclSparseNumAlgorithms> predictedSeconds{};  // rank 0's
  double plannerDensity = 0.0;                                      // stats.density, rank 0's
  double plannerGamma = 0.0;                                        // stats.gamma, rank 0's
  double statsBytesSent = 0.0;                                      // last call, max over ranks
  double statsBytesSentMean = 0.0;                                  // last call, mean over ranks
  double statsBytesReceived = 0.0;                                  // last call, max over ranks
  double predictedBytesSent = 0.0;                                  // the formula, max over ranks
  double pushImbalance = 0.0;                                       // max over ranks
  double pullImbalance = 0.0;

  ModeResult sparse;  // wrongElements: against the dense all-reduce
  ModeResult dense;
  int64_t divergentRanks = -1;  // ranks whose result differs bitwise from rank 0's; -1: unchecked

  bool failed() const { return sparse.wrongElements > 0 || divergentRanks > 0; }
  // Dense median time over sparse median time.
  double speedup() const {
    return sparse.medianSeconds > 0.0 ? dense.medianSeconds / sparse.medianSeconds : 0.0;
  }
  double sentOverPredicted() const {
    return predictedBytesSent > 0.0 ? statsBytesSent / predictedBytesSent : 0.0;
  }
};

}  // namespace spccl::perf

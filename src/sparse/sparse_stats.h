// What the sparse all-reduce reports about itself: Zen's imbalance ratio
// (Def. 8) and the per-tag record behind spcclSparseGetStats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "spccl.h"

namespace spccl::sparse {

// Zen Def. 8: max over the mean of the sizes of n partitions (1 when all
// are empty): 1 is perfect balance, n means one partition holds everything.
double imbalanceRatio(std::span<const uint64_t> sizes);

// One tag's record on this rank (the public struct's fields, kept in C++
// form until spcclSparseGetStats copies them out).
struct SparseCallStats {
  uint64_t calls = 0;
  spcclSparseAlgorithm_t algorithm = spcclSparseAuto;
  std::string reason;
  double predictedSeconds[spcclSparseNumAlgorithms] = {-1, -1, -1, -1, -1, -1};
  double density = 0;
  double gamma = 0;
  double pushImbalance = 1;
  double pullImbalance = 1;
  uint64_t bytesSent = 0;
  uint64_t bytesReceived = 0;
  uint64_t predictedBytesSent = 0;
  double measuredSeconds = 0;
};

// Copies what fits in the caller's struct (stats->size bytes, an older
// smaller struct gets its prefix). Fails when size is below the fields every
// version has.
spcclResult_t copyStatsOut(const SparseCallStats& from, spcclSparseStats_t* to);

}  // namespace spccl::sparse

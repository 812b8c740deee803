// The numbers of one table row, as the table and the JSON report see them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

// One column group: out-of-place or in-place. Times are those of the
// slowest rank: per iteration for the median, over the whole loop for the
// average (nccl-tests' time column).
struct ModeResult {
  double averageSeconds = 0.0;
  double medianSeconds = 0.0;
  std::vector<double> iterationSeconds;  // slowest rank, each iteration
  double algBandwidth = 0.0;             // GB/s: size / average time
  double busBandwidth = 0.0;             // GB/s: algBandwidth * the collective's factor
  // spccl's extension; both are the maximum over ranks.
  double bytesSentPerIteration = 0.0;   // spcclCommGetCounters bytesSent
  double cpuSecondsPerIteration = 0.0;  // process CPU time (all threads)
  int64_t wrongElements = -1;           // max over ranks; -1: not checked
};

struct SizeResult {
  size_t bytes;  // the largest buffer a rank touches (nccl-tests' size column)
  size_t count;  // the count argument of the call
  spcclDataType_t type;
  const char* opName;  // "none" when the collective does not reduce
  int root;            // -1 when it has none
  ModeResult outOfPlace;
  ModeResult inPlace;
};

}  // namespace spccl::perf

// Command-line options of every perf binary: nccl-tests' flags, their
// defaults and their meaning, plus -J for machine-readable results.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

struct PerfOptions {
  size_t minBytes = 32u << 20;  // nccl-tests' defaults
  size_t maxBytes = 32u << 20;
  size_t stepBytes = 1u << 20;
  size_t stepFactor = 1;  // > 1: multiply, else add stepBytes
  int iterations = 20;
  int warmupIterations = 5;
  bool check = true;
  std::vector<spcclRedOp_t> ops{spcclSum};
  std::vector<spcclDataType_t> types{spcclFloat32};
  int root = 0;
  // -z is accepted for nccl-tests compatibility: host-buffer calls are
  // always blocking, so it changes nothing.
  int blocking = 0;
  std::string jsonPath;  // -J: write results here (rank 0), empty: none
};

enum class ParseOutcome { kRun, kExitSuccess, kExitFailure };

// Messages go to stderr (usage to stdout for -h).
ParseOutcome parsePerfOptions(int argc, char** argv, PerfOptions* options);

// The message sizes in bytes, from minBytes to maxBytes by the step.
std::vector<size_t> messageSizes(const PerfOptions& options);

// "64M" -> 67108864; K, M, G are powers of 1024 as in nccl-tests. False
// when text is not a non-negative size.
bool parseByteSize(const char* text, size_t* bytes);

}  // namespace spccl::perf

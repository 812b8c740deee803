// Command-line options of every perf binary: nccl-tests' flags, their
// defaults and their meaning, plus -J for machine-readable results.
#pragma once

#include <getopt.h>

#include <cstddef>
#include <functional>
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
  // -p: a progress line per size on stderr (rank 0): 1 on, 0 off, -1 (the
  // default) on when stderr is a terminal (common/sweep_progress.h).
  int progress = -1;
  // --device: buffers in CUDA device memory, calls on a stream
  // (common/device_memory.h).
  bool deviceBuffers = false;
};

enum class ParseOutcome { kRun, kExitSuccess, kExitFailure };

// A binary's own flags on top of the shared ones (the sparse binary's -D,
// -O, ...). Long-only options use flag values >= 256.
struct OptionExtension {
  std::string shortOptions;  // getopt letters, appended to the shared ones
  std::vector<option> longOptions;
  std::string usage;  // lines for -h, each "\t[...]\n"
  // One option; false, after saying why on stderr, when its value is invalid.
  std::function<bool(int flag, const char* value)> apply;
  // After all options; false after saying why. May be empty.
  std::function<bool(const PerfOptions& options)> validate;
};

// Messages go to stderr (usage to stdout for -h). extension may be null.
ParseOutcome parsePerfOptions(int argc, char** argv, PerfOptions* options,
                              const OptionExtension* extension = nullptr);

// The message sizes in bytes, from minBytes to maxBytes by the step.
std::vector<size_t> messageSizes(const PerfOptions& options);

// "64M" -> 67108864; K, M, G are powers of 1024 as in nccl-tests. False
// when text is not a non-negative size.
bool parseByteSize(const char* text, size_t* bytes);

}  // namespace spccl::perf

// Progress of a long sweep, on stderr: one line per size done, with the
// sizes done of the total, the time so far and an estimate of the time
// left. stdout (the table) is untouched, so scripts that parse it see the
// same output with or without it. Rank 0 only; on with -p 1, off with
// -p 0, and by default on when stderr is a terminal (perf/README.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "common/perf_options.h"

namespace spccl::perf {

// Whether this run shows progress: -p, else whether stderr is a terminal.
bool progressWanted(const PerfOptions& options);

// Seconds the steps still to run will take, from those done so far: each
// step costs a + b * bytes, fitted (least squares, a and b not negative) to
// the steps done, so that a sweep whose last sizes are the largest is not
// estimated from its small first ones alone. With fewer than two distinct
// sizes done, each step left costs the mean of those done.
double estimateSecondsLeft(std::span<const size_t> doneBytes, std::span<const double> doneSeconds,
                           std::span<const size_t> leftBytes);

class SweepProgress {
 public:
  // steps: the bytes of every step of the sweep, in the order they run.
  SweepProgress(std::vector<size_t> steps, bool enabled, std::FILE* out = stderr);

  // The next step finished; label says which ("1048576 bytes float sum").
  void stepDone(const std::string& label);

 private:
  std::vector<size_t> steps_;
  std::vector<double> seconds_;  // per step done
  bool enabled_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace spccl::perf

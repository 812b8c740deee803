// What every perf binary's main does around its sweep: parse the options,
// add up the rows' checks and bus bandwidths, and end with the exit status
// that says how the run went.
#pragma once

#include <cstddef>
#include <vector>

#include "common/perf_options.h"
#include "common/perf_session.h"

namespace spccl::perf {

// Exit status of a run in which a result check failed.
constexpr int kExitWrongResults = 1;

// The failed checks and the average bus bandwidth of the footer line.
struct RunTotals {
  int failedChecks = 0;
  double busBandwidthSum = 0.0;
  int measurements = 0;

  void add(bool failed, double busBandwidth) {
    failedChecks += failed ? 1 : 0;
    busBandwidthSum += busBandwidth;
    ++measurements;
  }
  double averageBusBandwidth() const { return measurements ? busBandwidthSum / measurements : 0.0; }
};

// The start of main: stdout line-buffered (progress shows line by line
// under a launcher), then the options. True to run; false with *exitCode
// 0 after -h, kExitError after an invalid flag. extension may be null.
bool startPerfMain(int argc, char** argv, PerfOptions* options, const OptionExtension* extension,
                   int* exitCode);

// The progress steps (common/sweep_progress.h) of a sweep that measures
// every op at every size for every type, in that nesting: each step's
// message size in bytes.
std::vector<size_t> sweepSteps(const PerfOptions& options);

// The end of main: waits for every rank (a launcher ends the job when the
// first rank exits with an error, so rank 0 must have printed and written
// everything), then kExitWrongResults when a check failed, kExitError when
// the JSON report could not be written, else 0.
int finishPerfMain(PerfSession& session, int failedChecks, bool jsonWritten = true);

}  // namespace spccl::perf

// The timed loop every perf binary runs: -n calls, each timed, then one
// max-reduction so that every figure is the slowest rank's (nccl-tests'
// convention; docs/benchmarking.md: "slowest rank per iteration").
#pragma once

#include <functional>
#include <vector>

#include "common/perf_result.h"
#include "common/perf_session.h"

namespace spccl::perf {

// Runs `call` `iterations` times and fills the timing fields of *result:
// averageSeconds, medianSeconds, iterationSeconds, cpuSecondsPerIteration
// and bytesSentPerIteration (communicator counters). Collective: every
// rank must call it with the same iteration count.
void timeIterations(const PerfSession& session, int iterations, const std::function<void()>& call,
                    ModeResult* result);

double medianOf(std::vector<double> values);

}  // namespace spccl::perf

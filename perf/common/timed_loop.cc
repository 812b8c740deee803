#include "common/timed_loop.h"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace spccl::perf {

namespace {

double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1.0e-9;
}

}  // namespace

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

void timeIterations(const PerfSession& session, int iterations, const std::function<void()>& call,
                    ModeResult* result) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> iterationSeconds(static_cast<size_t>(iterations));
  const uint64_t sentBefore = session.counters().bytesSent;
  const double cpuBefore = processCpuSeconds();
  const Clock::time_point loopStart = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    const Clock::time_point start = Clock::now();
    call();
    iterationSeconds[static_cast<size_t>(i)] =
        std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double loopSeconds = std::chrono::duration<double>(Clock::now() - loopStart).count();
  const double cpuSeconds = processCpuSeconds() - cpuBefore;
  const uint64_t sent = session.counters().bytesSent - sentBefore;

  // One max-reduction for all of it: [loop time, CPU time, bytes sent, each iteration].
  std::vector<double> stats{loopSeconds / iterations, cpuSeconds / iterations,
                            static_cast<double>(sent) / iterations};
  stats.insert(stats.end(), iterationSeconds.begin(), iterationSeconds.end());
  session.maxOverRanks(&stats);
  result->averageSeconds = stats[0];
  result->cpuSecondsPerIteration = stats[1];
  result->bytesSentPerIteration = stats[2];
  result->iterationSeconds.assign(stats.begin() + 3, stats.end());
  result->medianSeconds = medianOf(result->iterationSeconds);
}

}  // namespace spccl::perf

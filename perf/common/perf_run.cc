#include "common/perf_run.h"

#include <cstdio>

namespace spccl::perf {

bool startPerfMain(int argc, char** argv, PerfOptions* options, const OptionExtension* extension,
                   int* exitCode) {
  setlinebuf(stdout);
  switch (parsePerfOptions(argc, argv, options, extension)) {
    case ParseOutcome::kExitSuccess:
      *exitCode = 0;
      return false;
    case ParseOutcome::kExitFailure:
      *exitCode = kExitError;
      return false;
    case ParseOutcome::kRun:
      break;
  }
  return true;
}

std::vector<size_t> sweepSteps(const PerfOptions& options) {
  std::vector<size_t> steps;
  for (size_t t = 0; t < options.types.size(); ++t)
    for (const size_t size : messageSizes(options))
      steps.insert(steps.end(), options.ops.size(), size);
  return steps;
}

int finishPerfMain(PerfSession& session, int failedChecks, bool jsonWritten) {
  session.barrier();
  if (failedChecks > 0) return kExitWrongResults;
  return jsonWritten ? 0 : kExitError;
}

}  // namespace spccl::perf

// perfMain: the run every perf binary shares. Sweep: for each type and op,
// warm up at the largest and the smallest size (as nccl-tests does), then
// one table row per size.
#include <libgen.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/collective_benchmark.h"
#include "common/collective_spec.h"
#include "common/json_report.h"
#include "common/perf_options.h"
#include "common/perf_run.h"
#include "common/perf_session.h"
#include "common/perf_table.h"
#include "common/sweep_progress.h"

namespace spccl::perf {

namespace {

// Non-reducing collectives run once per type, with an op they ignore.
std::vector<spcclRedOp_t> opsToRun(const CollectiveSpec& spec, const PerfOptions& options) {
  return spec.reduces ? options.ops : std::vector<spcclRedOp_t>{spcclSum};
}

}  // namespace

int perfMain(int argc, char** argv, const CollectiveSpec& spec) {
  const char* program = basename(argv[0]);
  PerfOptions options;
  if (int exitCode = 0; !startPerfMain(argc, argv, &options, nullptr, &exitCode)) return exitCode;

  PerfSession session(options.deviceBuffers);
  const bool printing = session.rank() == 0;
  if (spec.rooted && options.root >= session.nranks()) {
    if (printing) {
      std::fprintf(stderr, "invalid root %d: there are %d ranks\n", options.root, session.nranks());
    }
    return kExitError;
  }
  const std::vector<std::string> rankDescriptions = session.rankDescriptions();
  if (printing) {
    printPreamble(program, options, session.nranks(), rankDescriptions);
    printColumnHeader();
  }

  CollectiveBenchmark benchmark(spec, options, session);
  const std::vector<size_t> sizes = messageSizes(options);
  std::vector<size_t> steps;
  for (size_t repeat = options.types.size() * opsToRun(spec, options).size(); repeat > 0; --repeat)
    steps.insert(steps.end(), sizes.begin(), sizes.end());
  SweepProgress progress(std::move(steps), printing && progressWanted(options));
  std::vector<SizeResult> rows;
  RunTotals totals;
  for (const spcclDataType_t type : options.types) {
    for (const spcclRedOp_t op : opsToRun(spec, options)) {
      benchmark.warmUp(options.maxBytes, type, op);
      benchmark.warmUp(options.minBytes, type, op);
      for (const size_t size : sizes) {
        SizeResult row = benchmark.measure(size, type, op);
        if (printing) printRow(row);
        progress.stepDone(std::to_string(size) + " bytes " + spcclTypeName(type) +
                          (spec.reduces ? std::string(" ") + spcclOpName(op) : ""));
        for (const ModeResult* mode : {&row.outOfPlace, &row.inPlace})
          totals.add(mode->wrongElements > 0, mode->busBandwidth);
        rows.push_back(std::move(row));
      }
    }
  }

  bool jsonWritten = true;
  if (printing) {
    printFooter(totals.failedChecks, totals.averageBusBandwidth());
    if (!options.jsonPath.empty()) {
      const RunSummary summary{program,          spec.name,           session.nranks(),
                               rankDescriptions, totals.failedChecks, totals.averageBusBandwidth()};
      jsonWritten = writeJsonReport(options.jsonPath, options, summary, rows);
    }
  }
  return finishPerfMain(session, totals.failedChecks, jsonWritten);
}

}  // namespace spccl::perf

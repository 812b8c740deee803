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
#include "common/perf_session.h"
#include "common/perf_table.h"
#include "common/sweep_progress.h"

namespace spccl::perf {

namespace {

constexpr int kExitWrongResults = 1;

// Non-reducing collectives run once per type, with an op they ignore.
std::vector<spcclRedOp_t> opsToRun(const CollectiveSpec& spec, const PerfOptions& options) {
  return spec.reduces ? options.ops : std::vector<spcclRedOp_t>{spcclSum};
}

struct RunTotals {
  int failedChecks = 0;
  double busBandwidthSum = 0.0;
  int busBandwidthCount = 0;

  void add(const ModeResult& mode) {
    if (mode.wrongElements > 0) ++failedChecks;
    busBandwidthSum += mode.busBandwidth;
    ++busBandwidthCount;
  }
  double averageBusBandwidth() const {
    return busBandwidthCount ? busBandwidthSum / busBandwidthCount : 0.0;
  }
};

}  // namespace

int perfMain(int argc, char** argv, const CollectiveSpec& spec) {
  setlinebuf(stdout);  // progress shows line by line under a launcher
  const char* program = basename(argv[0]);
  PerfOptions options;
  switch (parsePerfOptions(argc, argv, &options)) {
    case ParseOutcome::kExitSuccess:
      return 0;
    case ParseOutcome::kExitFailure:
      return kExitError;
    case ParseOutcome::kRun:
      break;
  }

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
        totals.add(row.outOfPlace);
        totals.add(row.inPlace);
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
  // A launcher ends the job when the first rank exits with an error: wait
  // until rank 0 has printed and written everything.
  session.barrier();
  if (totals.failedChecks > 0) return kExitWrongResults;
  return jsonWritten ? 0 : kExitError;
}

}  // namespace spccl::perf

// sparse_all_reduce_perf: spcclSparseAllReduceWithOptions against
// spcclAllReduce on the same inputs, in nccl-tests' style (docs/algorithms.md
// section 2, docs/benchmarking.md). Inputs are generated per rank from --seed
// (common/sparse_workload.h) or replayed from .npy files (--input).
#include <libgen.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/json_report.h"
#include "common/perf_options.h"
#include "common/perf_run.h"
#include "common/perf_session.h"
#include "common/perf_table.h"
#include "common/sparse_benchmark.h"
#include "common/sparse_check.h"
#include "common/sparse_json_report.h"
#include "common/sparse_options.h"
#include "common/sparse_replay.h"
#include "common/sparse_table.h"
#include "common/sparse_workload.h"
#include "common/sweep_progress.h"

namespace {

using namespace spccl::perf;

void printWorkload(const SparseOptions& options) {
  const SparseWorkloadSpec& w = options.workload;
  if (options.inputDir.empty()) {
    std::printf("# sparse inputs: density %g, overlap %g, zipf %g, row width %zu, seed %llu\n",
                w.density, w.overlap, w.zipfExponent, w.rowWidth,
                static_cast<unsigned long long>(w.seed));
  } else {
    std::printf("# sparse inputs: replayed from %s\n", options.inputDir.c_str());
  }
  std::printf(
      "# sparse options: algorithm %s, encoding %s, partitioner %s, tag %s, interface %s\n#\n",
      spcclSparseAlgorithmName(options.algorithm), spcclSparseEncodingName(options.encoding),
      spcclSparsePartitionerName(options.partitioner),
      options.tag ? std::to_string(options.tag).c_str() : "per row",
      options.cooInterface ? "coo-to-coo (--coo)" : "dense");
}

// Every rank's files must agree on the type, and dense ones on the size;
// COO inputs take the largest index over ranks. Returns the dense input.
std::vector<unsigned char> loadReplayedInput(const SparseOptions& options,
                                             const PerfSession& session, ReplayedInput* input) {
  std::string error;
  if (!input->load(options.inputDir, session.rank(), &error)) session.fail("--input: " + error);
  const double type = input->type();
  const double count = static_cast<double>(input->localCount());
  std::vector<double> maxima{
      type, -type, count, -count, input->isCoo() ? 1.0 : 0.0, input->isCoo() ? 0.0 : 1.0};
  session.maxOverRanks(&maxima);
  if (maxima[0] != -maxima[1]) session.fail("--input: the ranks' files have different dtypes");
  if (maxima[4] + maxima[5] > 1.0) {
    session.fail("--input: some ranks have dense files, others COO; use one kind");
  }
  if (!input->isCoo() && maxima[2] != -maxima[3]) {
    session.fail("--input: the ranks' dense arrays have different sizes");
  }
  return input->denseInput(static_cast<size_t>(maxima[2]));
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = basename(argv[0]);
  PerfOptions options;
  SparseOptions sparseOptions;
  const OptionExtension extension = sparseOptionExtension(&sparseOptions);
  if (int exitCode = 0; !startPerfMain(argc, argv, &options, &extension, &exitCode))
    return exitCode;

  PerfSession session(options.deviceBuffers);
  const bool printing = session.rank() == 0;
  const std::vector<std::string> rankDescriptions = session.rankDescriptions();
  if (printing) {
    printPreamble(program, options, session.nranks(), rankDescriptions);
    printWorkload(sparseOptions);
    printSparseColumnHeader();
  }

  SparseBenchmark benchmark(options, sparseOptions, session);
  std::vector<SparseSizeResult> rows;
  RunTotals totals;
  // Replayed inputs: one step per op, sized unknown (0).
  std::vector<size_t> steps = sparseOptions.inputDir.empty()
                                  ? sweepSteps(options)
                                  : std::vector<size_t>(options.ops.size(), 0);
  SweepProgress progress(std::move(steps), printing && progressWanted(options));
  const auto record = [&](SparseSizeResult row) {
    if (printing) printSparseRow(row);
    progress.stepDone(std::to_string(row.bytes) + " bytes " + spcclTypeName(row.type) + " " +
                      row.opName);
    totals.add(row.failed(), row.sparse.busBandwidth);
    rows.push_back(std::move(row));
  };
  if (!sparseOptions.inputDir.empty()) {
    ReplayedInput replayed;
    const std::vector<unsigned char> data = loadReplayedInput(sparseOptions, session, &replayed);
    const size_t count = data.size() / spcclTypeSize(replayed.type());
    const SparseInput input{replayed.type(),  count,
                            data.data(),      countNonZeros(replayed.type(), count, data.data()),
                            replayed.exact(), /*overlap=*/-1.0};
    for (const spcclRedOp_t op : options.ops) record(benchmark.measure(input, op));
  } else {
    std::vector<unsigned char> data;
    for (const spcclDataType_t type : options.types) {
      for (const size_t size : messageSizes(options)) {
        const size_t count = size / spcclTypeSize(type);
        data.resize(count * spcclTypeSize(type));
        const size_t nonZeros =
            fillSparseInput(sparseOptions.workload, count, session.rank(), type, data.data());
        const SparseInput input{type,     count,          data.data(),
                                nonZeros, /*exact=*/true, sparseOptions.workload.overlap};
        for (const spcclRedOp_t op : options.ops) record(benchmark.measure(input, op));
      }
    }
  }

  bool jsonWritten = true;
  if (printing) {
    printFooter(totals.failedChecks, totals.averageBusBandwidth());
    if (!options.jsonPath.empty()) {
      const RunSummary summary{program,          "sparse_all_reduce", session.nranks(),
                               rankDescriptions, totals.failedChecks, totals.averageBusBandwidth()};
      jsonWritten = writeSparseJsonReport(options.jsonPath, options, sparseOptions, summary, rows);
    }
  }
  return finishPerfMain(session, totals.failedChecks, jsonWritten);
}

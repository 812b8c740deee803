#include "common/perf_table.h"

#include <cinttypes>
#include <cstdio>

namespace spccl::perf {

std::string formatMicroseconds(double seconds) {
  const double us = seconds * 1.0e6;
  char text[32];
  if (us >= 10000.0) {
    std::snprintf(text, sizeof(text), "%7.0f", us);
  } else if (us >= 100.0) {
    std::snprintf(text, sizeof(text), "%7.1f", us);
  } else {
    std::snprintf(text, sizeof(text), "%7.2f", us);
  }
  return text;
}

std::string formatWrong(int64_t wrong) {
  if (wrong < 0) return "N/A";
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRId64, wrong);
  return text;
}

namespace {

void printMode(const ModeResult& mode) {
  std::printf("  %7s  %6.2f  %6.2f  %5s", formatMicroseconds(mode.averageSeconds).c_str(),
              mode.algBandwidth, mode.busBandwidth, formatWrong(mode.wrongElements).c_str());
}

void printExtension(const ModeResult& mode) {
  std::printf("  %7s  %12.0f", formatMicroseconds(mode.medianSeconds).c_str(),
              mode.bytesSentPerIteration);
}

}  // namespace

void printPreamble(const char* program, const PerfOptions& options, int nranks,
                   const std::vector<std::string>& rankDescriptions) {
  const bool byFactor = options.stepFactor > 1;
  // nccl-tests' first line, word for word, for the scripts that parse it.
  std::printf(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d "
      "agg iters: 1 validation: %d graph: 0\n",
      options.minBytes, options.maxBytes, byFactor ? options.stepFactor : options.stepBytes,
      byFactor ? "factor" : "bytes", options.warmupIterations, options.iterations,
      options.check ? 1 : 0);
  int version = 0;
  spcclGetVersion(&version);
  std::printf("# %s: spccl %d, %d ranks, %s buffers, blocking calls\n", program, version, nranks,
              options.deviceBuffers ? "device (CUDA)" : "host");
  std::printf("#\n# Using ranks\n");
  for (const std::string& line : rankDescriptions) std::printf("%s\n", line.c_str());
  std::printf("#\n");
}

void printColumnHeader() {
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
      "%23s%23s\n",
      "", "", "", "", "", "out-of-place (spccl)", "in-place (spccl)");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  %7s  %12s  %7s  %12s\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong", "median", "sent", "median", "sent");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s  %7s  %12s  %7s  %12s\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "", "(us)", "(B)", "(us)", "(B)");
}

void printRow(const SizeResult& row) {
  std::printf("%12zu  %12zu  %8s  %6s  %6i", row.bytes, row.count, spcclTypeName(row.type),
              row.opName, row.root);
  printMode(row.outOfPlace);
  printMode(row.inPlace);
  printExtension(row.outOfPlace);
  printExtension(row.inPlace);
  std::printf("\n");
}

void printFooter(int failedChecks, double averageBusBandwidth) {
  std::printf("# Out of bounds values : %d %s\n", failedChecks, failedChecks ? "FAILED" : "OK");
  std::printf("# Avg bus bandwidth    : %g \n", averageBusBandwidth);
  std::printf("#\n");
}

}  // namespace spccl::perf

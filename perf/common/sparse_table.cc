#include "common/sparse_table.h"

#include <cstdio>
#include <string>

#include "common/perf_table.h"

namespace spccl::perf {

namespace {

std::string formatFraction(double value, const char* format) {
  if (value < 0.0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

void printSparseColumnHeader() {
  std::printf("# %10s  %12s  %8s  %6s  %7s  %7s  %6s  %-114s  %s\n", "", "", "", "", "", "", "",
              "  ----------------------------------------------- sparse all-reduce "
              "-----------------------------------------------",
              "------ dense all-reduce ------");
  std::printf(
      "# %10s  %12s  %8s  %6s  %7s  %7s  %6s  %8s  %7s  %7s  %6s  %6s  %12s  %12s  %5s  %5s  %5s  "
      "%6s  %6s  %7s  %7s  %6s  %7s\n",
      "size", "count", "type", "redop", "density", "overlap", "gamma", "algo", "time", "median",
      "algbw", "busbw", "sent", "predicted", "ratio", "push", "pull", "#wrong", "#xrank", "time",
      "median", "busbw", "speedup");
  std::printf(
      "# %10s  %12s  %8s  %6s  %7s  %7s  %6s  %8s  %7s  %7s  %6s  %6s  %12s  %12s  %5s  %5s  %5s  "
      "%6s  %6s  %7s  %7s  %6s  %7s\n",
      "(B)", "(elements)", "", "", "", "", "", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "(B/rank)",
      "(B/rank)", "", "", "", "", "", "(us)", "(us)", "(GB/s)", "");
}

void printSparseRow(const SparseSizeResult& row) {
  std::printf("%12zu  %12zu  %8s  %6s  %7.4f  %7s  %6.2f", row.bytes, row.count,
              spcclTypeName(row.type), row.opName, row.density,
              formatFraction(row.overlap, "%7.2f").c_str(), row.gamma);
  std::printf("  %8s  %7s  %7s  %6.2f  %6.2f  %12.0f  %12.0f  %5.2f  %5.2f  %5.2f  %6s  %6s",
              row.algorithm.c_str(), formatMicroseconds(row.sparse.averageSeconds).c_str(),
              formatMicroseconds(row.sparse.medianSeconds).c_str(), row.sparse.algBandwidth,
              row.sparse.busBandwidth, row.statsBytesSent, row.predictedBytesSent,
              row.sentOverPredicted(), row.pushImbalance, row.pullImbalance,
              formatWrong(row.sparse.wrongElements).c_str(),
              formatWrong(row.divergentRanks).c_str());
  std::printf("  %7s  %7s  %6.2f  %6.2fx\n", formatMicroseconds(row.dense.averageSeconds).c_str(),
              formatMicroseconds(row.dense.medianSeconds).c_str(), row.dense.busBandwidth,
              row.speedup());
}

}  // namespace spccl::perf

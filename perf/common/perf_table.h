// The table rank 0 prints, in nccl-tests' shape so that the scripts which
// read nccl-tests' output read ours: '#' header lines, then per size
// "size count type redop root | time algbw busbw #wrong" out of place and
// in place. spccl's columns (median time, bytes sent per rank) come last.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/perf_options.h"
#include "common/perf_result.h"

namespace spccl::perf {

// nccl-tests' time format: microseconds, fewer decimals as they grow, 7 wide.
std::string formatMicroseconds(double seconds);
// An element count, or "N/A" when it is negative (not checked).
std::string formatWrong(int64_t wrong);

void printPreamble(const char* program, const PerfOptions& options, int nranks,
                   const std::vector<std::string>& rankDescriptions);
void printColumnHeader();
void printRow(const SizeResult& row);
// failedChecks: rows × modes with a wrong element.
void printFooter(int failedChecks, double averageBusBandwidth);

}  // namespace spccl::perf

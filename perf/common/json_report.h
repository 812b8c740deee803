// -J FILE: every table row as a JSON record with all the table's fields
// plus what the table leaves out (per-iteration times, CPU time), for the
// plots and tables in docs/perf/.
#pragma once

#include <string>
#include <vector>

#include "common/perf_options.h"
#include "common/perf_result.h"

namespace spccl::perf {

struct RunSummary {
  const char* program;     // "all_reduce_perf"
  const char* collective;  // "all_reduce"
  int nranks;
  std::vector<std::string> rankDescriptions;
  int failedChecks;
  double averageBusBandwidth;
};

// False (after saying why on stderr) when the file cannot be written.
bool writeJsonReport(const std::string& path, const PerfOptions& options, const RunSummary& summary,
                     const std::vector<SizeResult>& rows);

}  // namespace spccl::perf

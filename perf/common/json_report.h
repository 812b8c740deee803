// -J FILE: every table row as a JSON record with all the table's fields
// plus what the table leaves out (per-iteration times, CPU time), for the
// plots and tables in docs/perf/.
#pragma once

#include <string>
#include <vector>

#include "common/json_writer.h"
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

// The pieces the dense and the sparse reports share.
// The dense harness's option keys, into an object the caller has opened
// (a binary with more options adds its own before closing it).
void writeOptionFields(JsonWriter& json, const PerfOptions& options);
// Opens the report object: benchmark, version, nranks and what the timing
// fields mean.
void beginReport(JsonWriter& json, const RunSummary& summary, const char* timing);
// {time_us, algbw_gbps, busbw_gbps, wrong, median_time_us, ...}.
void writeMode(JsonWriter& json, const ModeResult& mode);
void writeRankDescriptions(JsonWriter& json, const std::vector<std::string>& rankDescriptions);
// False (after saying why on stderr) when the file cannot be written.
bool writeJsonFile(const std::string& path, const JsonWriter& json);

// False (after saying why on stderr) when the file cannot be written.
bool writeJsonReport(const std::string& path, const PerfOptions& options, const RunSummary& summary,
                     const std::vector<SizeResult>& rows);

}  // namespace spccl::perf

#include "common/json_report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/json_writer.h"

namespace spccl::perf {

void writeOptionFields(JsonWriter& json, const PerfOptions& options) {
  json.key("minbytes").value(uint64_t{options.minBytes});
  json.key("maxbytes").value(uint64_t{options.maxBytes});
  json.key("stepbytes").value(uint64_t{options.stepBytes});
  json.key("stepfactor").value(uint64_t{options.stepFactor});
  json.key("iters").value(options.iterations);
  json.key("warmup_iters").value(options.warmupIterations);
  json.key("check").value(options.check);
  json.key("root").value(options.root);
}

void writeMode(JsonWriter& json, const ModeResult& mode) {
  json.beginObject();
  json.key("time_us").value(mode.averageSeconds * 1.0e6);
  json.key("algbw_gbps").value(mode.algBandwidth);
  json.key("busbw_gbps").value(mode.busBandwidth);
  json.key("wrong");
  if (mode.wrongElements < 0) {
    json.value(nullptr);  // not checked
  } else {
    json.value(mode.wrongElements);
  }
  json.key("median_time_us").value(mode.medianSeconds * 1.0e6);
  json.key("bytes_sent_per_rank").value(mode.bytesSentPerIteration);
  json.key("cpu_s_per_iter").value(mode.cpuSecondsPerIteration);
  json.key("iter_time_us").beginArray();
  for (const double seconds : mode.iterationSeconds) json.value(seconds * 1.0e6);
  json.endArray();
  json.endObject();
}

void writeRankDescriptions(JsonWriter& json, const std::vector<std::string>& rankDescriptions) {
  json.beginArray();
  for (const std::string& description : rankDescriptions) {
    // Without the table's leading "#  ".
    const size_t start = description.find_first_not_of("# ");
    json.value(start == std::string::npos ? std::string() : description.substr(start));
  }
  json.endArray();
}

bool writeJsonFile(const std::string& path, const JsonWriter& json) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot write JSON results to %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  const std::string& text = json.text();
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                       std::fputc('\n', file) != EOF;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    std::fprintf(stderr, "writing JSON results to %s failed\n", path.c_str());
    return false;
  }
  return true;
}

namespace {

void writeRow(JsonWriter& json, const char* collective, int nranks, const SizeResult& row) {
  json.beginObject();
  json.key("collective").value(collective);
  json.key("nranks").value(nranks);
  json.key("size").value(uint64_t{row.bytes});
  json.key("count").value(uint64_t{row.count});
  json.key("type").value(spcclTypeName(row.type));
  json.key("redop").value(row.opName);
  json.key("root").value(row.root);
  json.key("out_of_place");
  writeMode(json, row.outOfPlace);
  json.key("in_place");
  writeMode(json, row.inPlace);
  json.endObject();
}

}  // namespace

void beginReport(JsonWriter& json, const RunSummary& summary, const char* timing) {
  int version = 0;
  spcclGetVersion(&version);
  json.beginObject();
  json.key("benchmark").value(summary.program);
  json.key("spccl_version").value(version);
  json.key("nranks").value(summary.nranks);
  json.key("timing").value(timing);
}

bool writeJsonReport(const std::string& path, const PerfOptions& options, const RunSummary& summary,
                     const std::vector<SizeResult>& rows) {
  JsonWriter json;
  beginReport(json, summary,
              "time_us: loop time / iters, slowest rank; median_time_us: median over iterations "
              "of the slowest rank's time; bytes_sent_per_rank and cpu_s_per_iter: per "
              "iteration, max over ranks");
  json.key("options").beginObject();
  writeOptionFields(json, options);
  json.endObject();
  json.key("ranks");
  writeRankDescriptions(json, summary.rankDescriptions);
  json.key("results").beginArray();
  for (const SizeResult& row : rows) writeRow(json, summary.collective, summary.nranks, row);
  json.endArray();
  json.key("out_of_bounds_values").value(summary.failedChecks);
  json.key("avg_busbw_gbps").value(summary.averageBusBandwidth);
  json.endObject();

  return writeJsonFile(path, json);
}

}  // namespace spccl::perf

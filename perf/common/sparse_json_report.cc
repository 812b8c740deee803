#include "common/sparse_json_report.h"

#include "common/json_writer.h"

namespace spccl::perf {

namespace {

void writeSparseOptionFields(JsonWriter& json, const SparseOptions& options) {
  const SparseWorkloadSpec& workload = options.workload;
  json.key("density").value(workload.density);
  json.key("overlap").value(workload.overlap);
  json.key("zipf").value(workload.zipfExponent);
  json.key("row_width").value(uint64_t{workload.rowWidth});
  json.key("seed").value(workload.seed);
  json.key("algorithm").value(spcclSparseAlgorithmName(options.algorithm));
  json.key("encoding").value(spcclSparseEncodingName(options.encoding));
  json.key("partitioner").value(spcclSparsePartitionerName(options.partitioner));
  json.key("interface").value(options.cooInterface ? "coo-to-coo" : "dense");
  json.key("tag").value(options.tag);
  json.key("input");
  if (options.inputDir.empty()) {
    json.value(nullptr);
  } else {
    json.value(options.inputDir);
  }
}

void writeRow(JsonWriter& json, int nranks, const SparseSizeResult& row) {
  json.beginObject();
  json.key("collective").value("sparse_all_reduce");
  json.key("nranks").value(nranks);
  json.key("size").value(uint64_t{row.bytes});
  json.key("count").value(uint64_t{row.count});
  json.key("type").value(spcclTypeName(row.type));
  json.key("redop").value(row.opName);
  json.key("tag").value(row.tag);
  json.key("density").value(row.density);
  json.key("overlap");
  if (row.overlap < 0.0) {
    json.value(nullptr);
  } else {
    json.value(row.overlap);
  }
  json.key("gamma").value(row.gamma);
  json.key("algorithm").value(row.algorithm);
  json.key("reason").value(row.reason);
  json.key("predicted_s").beginObject();
  for (int a = 0; a < spcclSparseNumAlgorithms; ++a) {
    const double seconds = row.predictedSeconds[static_cast<size_t>(a)];
    if (seconds >= 0.0) {
      json.key(spcclSparseAlgorithmName(static_cast<spcclSparseAlgorithm_t>(a))).value(seconds);
    }
  }
  json.endObject();
  json.key("planner_density").value(row.plannerDensity);
  json.key("planner_gamma").value(row.plannerGamma);
  json.key("stats_bytes_sent").value(row.statsBytesSent);
  json.key("stats_bytes_sent_mean").value(row.statsBytesSentMean);
  json.key("stats_bytes_received").value(row.statsBytesReceived);
  json.key("predicted_bytes_sent").value(row.predictedBytesSent);
  json.key("sent_over_predicted").value(row.sentOverPredicted());
  json.key("push_imbalance").value(row.pushImbalance);
  json.key("pull_imbalance").value(row.pullImbalance);
  json.key("divergent_ranks");
  if (row.divergentRanks < 0) {
    json.value(nullptr);
  } else {
    json.value(row.divergentRanks);
  }
  json.key("sparse");
  writeMode(json, row.sparse);
  json.key("dense");
  writeMode(json, row.dense);
  json.key("speedup").value(row.speedup());
  json.endObject();
}

}  // namespace

bool writeSparseJsonReport(const std::string& path, const PerfOptions& options,
                           const SparseOptions& sparseOptions, const RunSummary& summary,
                           const std::vector<SparseSizeResult>& rows) {
  JsonWriter json;
  beginReport(
      json, summary,
      "time_us: loop time / iters, slowest rank; median_time_us: median over iterations of the "
      "slowest rank's time; bytes_sent_per_rank (communicator counters) and cpu_s_per_iter: per "
      "iteration, max over ranks; stats_*: spcclSparseGetStats for the last timed call, max over "
      "ranks (stats_bytes_sent_mean: mean over ranks); sparse.wrong: elements differing from "
      "the dense all-reduce, max over ranks");
  json.key("options").beginObject();
  writeOptionFields(json, options);
  writeSparseOptionFields(json, sparseOptions);
  json.endObject();
  json.key("ranks");
  writeRankDescriptions(json, summary.rankDescriptions);
  json.key("results").beginArray();
  for (const SparseSizeResult& row : rows) writeRow(json, summary.nranks, row);
  json.endArray();
  json.key("out_of_bounds_values").value(summary.failedChecks);
  json.key("avg_busbw_gbps").value(summary.averageBusBandwidth);
  json.endObject();
  return writeJsonFile(path, json);
}

}  // namespace spccl::perf

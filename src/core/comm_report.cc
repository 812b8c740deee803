#include "core/comm_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <span>

#include "base/log.h"
#include "coll/collective.h"
#include "coll/cost_model.h"
#include "sparse/sparse_algorithm_table.h"

namespace spccl {

namespace {

std::string plural(int n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string describeNetwork(const PeerLinks& links) {
  std::string rails =
      links.fewestRails == links.mostRails
          ? plural(links.fewestRails, "rail")
          : std::to_string(links.fewestRails) + "-" + std::to_string(links.mostRails) + " rails";
  std::string text = links.network + " to " + plural(links.networkPeers, "peer") + " (" + rails +
                     " x " + plural(links.connsPerRail, "connection");
  for (size_t d = 0; d < links.devices.size(); ++d)
    text += (d == 0 ? ": " : ", ") + links.devices[d];
  return text + ")";
}

// Every collective of the dense table (in the table's order) with its
// algorithms, or the one SPCCL_ALGO forces.
std::string describeDenseTable(const std::string& override) {
  std::span<const DenseAlgorithm> table = denseAlgorithms();
  std::vector<CollType> types;
  for (const DenseAlgorithm& algorithm : table)
    if (std::find(types.begin(), types.end(), algorithm.type) == types.end())
      types.push_back(algorithm.type);
  std::string text;
  for (CollType type : types) {
    std::string names;
    const char* forced = nullptr;
    for (const DenseAlgorithm& algorithm : table) {
      if (algorithm.type != type) continue;
      if (forced == nullptr && !override.empty() && overrideNames(override, algorithm.name))
        forced = algorithm.name;
      if (!names.empty()) names += '|';
      names += algorithm.name;
    }
    if (!text.empty()) text += ", ";
    text += collTypeName(type);
    text += ' ';
    text += forced != nullptr ? std::string(forced) + " (SPCCL_ALGO)" : names;
  }
  return text;
}

std::string describeSparseTable() {
  std::string text;
  for (const sparse::SparseAlgorithmInfo& algorithm : sparse::sparseAlgorithms()) {
    if (!text.empty()) text += '|';
    text += algorithm.name;
  }
  return text;
}

}  // namespace

std::string describeRankReady(const spcclComm& comm, const PeerLinks& links) {
  const RankInfo& me = comm.ranks[comm.rank];
  const LinkModel& model = comm.engine->linkModel();
  std::string peers;
  if (links.shmPeers > 0) peers = "shm to " + plural(links.shmPeers, "peer");
  if (links.networkPeers > 0) peers += (peers.empty() ? "" : ", ") + describeNetwork(links);
  if (peers.empty()) peers = "no peers";
  char text[1024];
  std::snprintf(text, sizeof(text),
                "comm 0x%016" PRIx64
                " rank %d nranks %d host %s pid %d - Init COMPLETE: %s; alpha %.1f us, %.3f "
                "GB/s (%s)",
                comm.commId, comm.rank, comm.nranks, me.hostname, static_cast<int>(me.pid),
                peers.c_str(), model.alphaSeconds * 1e6, 1e-9 / model.betaSecondsPerByte,
                model.measured ? "measured" : "defaults, not measured");
  return text;
}

std::string describeCommTables(const spcclComm& comm) {
  std::set<uint64_t> hosts;
  for (const RankInfo& info : comm.ranks) hosts.insert(info.hostId);
  const std::string& override = comm.options.algorithmOverride;
  char head[160];
  std::snprintf(head, sizeof(head), "comm 0x%016" PRIx64 " nranks %d on %s, transport %s",
                comm.commId, comm.nranks, plural(static_cast<int>(hosts.size()), "host").c_str(),
                comm.options.transport.c_str());
  return std::string(head) + "; dense algorithms (" +
         (override.empty() ? "cost model" : "SPCCL_ALGO=" + override + ", else cost model") +
         "): " + describeDenseTable(override) +
         "; sparse algorithms (planner, per call): " + describeSparseTable();
}

void logCommReady(const spcclComm& comm, const PeerLinks& links) {
  if (!logEnabled(LogLevel::Info, kLogInit)) return;
  if (comm.rank == 0) SPCCL_INFO(kLogInit, "%s", describeCommTables(comm).c_str());
  SPCCL_INFO(kLogInit, "%s", describeRankReady(comm, links).c_str());
}

}  // namespace spccl

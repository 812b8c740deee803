#include "flight_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "json_reader.h"

namespace spccl::info {

namespace {

constexpr std::string_view kDumpStart = "{\"spccl_flight_recorder\"";

struct Dump {
  std::string source;  // "file:line"
  JsonValue json;
  int rank = -1;
  int nranks = 0;
};

// Every dump in the file: its lines that start a dump (a debug file holds
// log lines too), or the whole file as one JSON value.
bool readDumps(const std::string& path, std::vector<Dump>* out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "spccl_info --dump: cannot read %s\n", path.c_str());
    return false;
  }
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  size_t found = 0;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.compare(0, kDumpStart.size(), kDumpStart) != 0) continue;
    Dump dump;
    std::string error;
    dump.source = path + ":" + std::to_string(number);
    if (!parseJson(line, &dump.json, &error)) {
      std::fprintf(stderr, "spccl_info --dump: %s: not a complete dump (%s)\n", dump.source.c_str(),
                   error.c_str());
      continue;
    }
    out->push_back(std::move(dump));
    ++found;
  }
  if (found == 0) {
    Dump dump;
    std::string error;
    dump.source = path;
    if (parseJson(text, &dump.json, &error) && dump.json.find("spccl_flight_recorder")) {
      out->push_back(std::move(dump));
      ++found;
    }
  }
  if (found == 0)
    std::fprintf(stderr, "spccl_info --dump: %s holds no flight recorder dump\n", path.c_str());
  for (size_t i = out->size() - found; i < out->size(); ++i) {
    (*out)[i].rank = static_cast<int>((*out)[i].json.numberAt("rank", -1));
    (*out)[i].nranks = static_cast<int>((*out)[i].json.numberAt("nranks", 0));
  }
  return found > 0;
}

uint64_t u64(const JsonValue& object, std::string_view key) {
  return static_cast<uint64_t>(object.numberAt(key, 0));
}

std::string duration(const JsonValue& record, double dumpedAtUs) {
  const double start = record.numberAt("start_us");
  double end = record.numberAt("end_us");
  const bool running = end == 0;
  if (running) end = dumpedAtUs;
  const double us = end - start;
  char text[48];
  if (us < 1000)
    std::snprintf(text, sizeof(text), "%.0f us", us);
  else if (us < 1e6)
    std::snprintf(text, sizeof(text), "%.2f ms", us / 1e3);
  else
    std::snprintf(text, sizeof(text), "%.2f s", us / 1e6);
  return running ? std::string(text) + " so far" : text;
}

void printDump(const Dump& dump) {
  const JsonValue& j = dump.json;
  const double dumpedAt = j.numberAt("dumped_at_us");
  std::printf("%s: comm %s rank %d of %d, host %s pid %" PRIu64 ", dumped on %s",
              dump.source.c_str(), j.textAt("comm", "?").c_str(), dump.rank, dump.nranks,
              j.textAt("host", "?").c_str(), u64(j, "pid"), j.textAt("trigger", "?").c_str());
  if (!j.textAt("detail").empty()) std::printf(" (%s)", j.textAt("detail").c_str());
  std::printf("\n  calls recorded %" PRIu64 ", the last %" PRIu64 " kept\n",
              u64(j, "calls_recorded"), std::min(u64(j, "calls_recorded"), u64(j, "capacity")));
  if (const JsonValue* peers = j.find("peers"); peers != nullptr && !peers->items.empty()) {
    std::printf("  peers (last call of which data was sent / received, bytes):\n");
    for (const JsonValue& peer : peers->items)
      std::printf("    rank %-4d sent #%-6" PRIu64 " received #%-6" PRIu64 " (%" PRIu64
                  " B out, %" PRIu64 " B in)\n",
                  static_cast<int>(peer.numberAt("rank", -1)), u64(peer, "last_call_sent"),
                  u64(peer, "last_call_received"), u64(peer, "sent_bytes"),
                  u64(peer, "received_bytes"));
  }
  const JsonValue* records = j.find("records");
  if (records == nullptr || records->items.empty()) return;
  std::printf("  %-7s %-20s %-8s %10s %12s %-5s %4s %-20s %-8s %s\n", "call", "collective", "type",
              "count", "bytes", "op", "root", "algorithm", "state", "time");
  for (const JsonValue& r : records->items) {
    const std::string root =
        r.numberAt("root", -1) < 0 ? "-" : std::to_string(static_cast<int>(r.numberAt("root")));
    std::printf("  #%-6" PRIu64 " %-20s %-8s %10" PRIu64 " %12" PRIu64 " %-5s %4s %-20s %-8s %s\n",
                u64(r, "call"), r.textAt("coll", "?").c_str(), r.textAt("datatype", "?").c_str(),
                u64(r, "count"), u64(r, "bytes"), r.textAt("op", "-").c_str(), root.c_str(),
                r.textAt("algorithm", "-").c_str(), r.textAt("state", "?").c_str(),
                duration(r, dumpedAt).c_str());
    if (r.find("error") != nullptr)
      std::printf("          %s: %s\n", r.textAt("result", "?").c_str(), r.textAt("error").c_str());
  }
}

std::string rankList(const std::set<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

const JsonValue* lastRecord(const Dump& dump) {
  const JsonValue* records = dump.json.find("records");
  if (records == nullptr || records->items.empty()) return nullptr;
  return &records->items.back();
}

// Which rank is behind, from the newest dump of each rank of one comm.
void printVerdict(const std::string& comm, const std::map<int, const Dump*>& byRank) {
  int nranks = 0;
  uint64_t newest = 0;
  std::string newestColl = "?";
  for (const auto& [rank, dump] : byRank) {
    nranks = std::max(nranks, dump->nranks);
    if (const JsonValue* last = lastRecord(*dump); last && u64(*last, "call") > newest) {
      newest = u64(*last, "call");
      newestColl = last->textAt("coll", "?");
    }
  }
  std::printf(
      "comm %s: dumps of rank(s) %s of %d\n", comm.c_str(),
      [&] {
        std::set<int> ranks;
        for (const auto& entry : byRank) ranks.insert(entry.first);
        return rankList(ranks);
      }()
          .c_str(),
      nranks);
  if (newest == 0) {
    std::printf("  no calls recorded\n");
    return;
  }
  std::set<int> waiting, finished;
  std::vector<std::string> behind;
  for (int rank = 0; rank < nranks; ++rank) {
    auto it = byRank.find(rank);
    if (it == byRank.end()) {
      // What the others last received from it tells how far it came.
      uint64_t lastFrom = 0;
      std::string seenBy;
      for (const auto& [other, dump] : byRank)
        if (const JsonValue* peers = dump->json.find("peers"))
          for (const JsonValue& peer : peers->items)
            if (static_cast<int>(peer.numberAt("rank", -1)) == rank)
              lastFrom = std::max(lastFrom, u64(peer, "last_call_received"));
      char line[256];
      if (lastFrom >= newest)
        std::snprintf(line, sizeof(line),
                      "rank %d left no dump; it sent data of call #%" PRIu64 ", so it reached it",
                      rank, lastFrom);
      else if (lastFrom > 0)
        std::snprintf(line, sizeof(line),
                      "rank %d never reached call #%" PRIu64
                      " %s (no dump from it; the last data "
                      "the others received from it was of call #%" PRIu64 ")",
                      rank, newest, newestColl.c_str(), lastFrom);
      else
        std::snprintf(line, sizeof(line),
                      "rank %d left no dump, and no dump shows data from it: it may not have "
                      "reached call #%" PRIu64 " %s",
                      rank, newest, newestColl.c_str());
      behind.emplace_back(line);
      continue;
    }
    const JsonValue* last = lastRecord(*it->second);
    const uint64_t call = last ? u64(*last, "call") : 0;
    if (call < newest) {
      char line[256];
      std::snprintf(
          line, sizeof(line),
          "rank %d never reached call #%" PRIu64 " %s (its last call is #%" PRIu64 " %s, %s)", rank,
          newest, newestColl.c_str(), call, last ? last->textAt("coll", "?").c_str() : "none",
          last ? last->textAt("state", "?").c_str() : "-");
      behind.emplace_back(line);
    } else if (last->textAt("state") == "done") {
      finished.insert(rank);
    } else {
      waiting.insert(rank);
    }
  }
  for (const std::string& line : behind) std::printf("  %s\n", line.c_str());
  if (!waiting.empty())
    std::printf("  rank(s) %s %s waiting in call #%" PRIu64 " %s (running or failed there)\n",
                rankList(waiting).c_str(), waiting.size() == 1 ? "is" : "are", newest,
                newestColl.c_str());
  if (!finished.empty())
    std::printf("  rank(s) %s finished call #%" PRIu64 " %s\n", rankList(finished).c_str(), newest,
                newestColl.c_str());
  if (behind.empty() && waiting.empty())
    std::printf("  every rank finished call #%" PRIu64 "; none is behind\n", newest);
}

}  // namespace

int printFlightReport(const std::vector<std::string>& paths) {
  std::vector<Dump> dumps;
  int status = 0;
  // A file without a dump is no error while others have one: the debug
  // file of a rank that hung holds none.
  for (const std::string& path : paths)
    if (!readDumps(path, &dumps) && !std::ifstream(path)) status = 1;
  if (dumps.empty()) status = 1;
  for (const Dump& dump : dumps) {
    printDump(dump);
    std::printf("\n");
  }
  // Per communicator, the newest dump of each rank.
  std::map<std::string, std::map<int, const Dump*>> byComm;
  for (const Dump& dump : dumps) {
    const Dump*& kept = byComm[dump.json.textAt("comm", "?")][dump.rank];
    if (kept == nullptr ||
        dump.json.numberAt("dumped_at_us") >= kept->json.numberAt("dumped_at_us"))
      kept = &dump;
  }
  for (const auto& [comm, byRank] : byComm) printVerdict(comm, byRank);
  return status;
}

}  // namespace spccl::info

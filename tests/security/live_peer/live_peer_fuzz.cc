// One rank of the live-peer fuzzer (test_live_peer_fuzz.py; docs/security.md,
// "Live-peer fuzzing"). Joins the job with spcclCommInitFromEnv like any
// rank, so a fake rank holds the real secret and completes the real
// handshake; then runs one collective.
//
//   live_peer_fuzz WORKLOAD                     a real rank
//   live_peer_fuzz WORKLOAD census              counts what it sends, changes nothing
//   live_peer_fuzz WORKLOAD KIND INDEX SEED     the fake rank: message INDEX of
//                                               KIND's class is rewritten (mutation.h)
//
// Prints one line, "livefuzz: result {json}": status ok (the result equals
// the reference), wrong (it does not), or error (the call failed; its text),
// the call's time and the result's hash. Exit 0, 2 (wrong) or 1 (error).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mutating_net.h"
#include "spccl.h"
#include "workloads.h"

namespace {

using namespace spccl::livefuzz;

std::string jsonText(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int usage() {
  std::fprintf(stderr,
               "usage: live_peer_fuzz WORKLOAD [census | KIND INDEX SEED]\n"
               "  WORKLOAD: dense sparse_coo sparse_bitmap sparse_packed compressed_twoshot "
               "compressed_ring\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3 && argc != 5) return usage();
  const std::string workload = argv[1];
  if (!knownWorkload(workload)) return usage();
  std::string role = "real";
  if (argc >= 3) {
    Mutation mutation;
    role = "census";
    if (argc == 5) {
      mutation.kind = mutationKindFromName(argv[2]);
      if (mutation.kind == MutationKind::None) return usage();
      mutation.index = std::strtoull(argv[3], nullptr, 10);
      mutation.seed = std::strtoull(argv[4], nullptr, 10);
      role = "fake";
    }
    installMutatingTransport(mutation);
  }

  spcclComm_t comm = nullptr;
  spcclResult_t res = spcclCommInitFromEnv(&comm, nullptr);
  if (res != spcclSuccess) {
    std::printf("livefuzz: result {\"role\":\"%s\",\"status\":\"init_error\",\"error\":%s}\n",
                role.c_str(), jsonText(spcclGetLastError(nullptr)).c_str());
    return 1;
  }
  int rank = 0;
  spcclCommUserRank(comm, &rank);
  if (role != "real") armMutation();

  const auto start = std::chrono::steady_clock::now();
  WorkloadResult result = runWorkload(workload, comm);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const char* status = result.code != spcclSuccess ? "error" : result.matches ? "ok" : "wrong";
  std::string extra;
  if (role != "real") {
    MutationReport report = mutationReport();
    extra = ",\"headers\":" + std::to_string(report.headers) +
            ",\"payloads\":" + std::to_string(report.payloads) +
            ",\"applied\":" + (report.applied ? "true" : "false");
  }
  std::printf(
      "livefuzz: result {\"rank\":%d,\"role\":\"%s\",\"status\":\"%s\",\"elapsed_ms\":%.1f,"
      "\"hash\":\"%016llx\",\"checked\":%s,\"error\":%s,\"mismatch\":%s%s}\n",
      rank, role.c_str(), status, ms, static_cast<unsigned long long>(result.hash),
      result.checked ? "true" : "false", jsonText(result.error).c_str(),
      jsonText(result.mismatch).c_str(), extra.c_str());
  std::fflush(stdout);
  if (result.code != spcclSuccess)
    spcclCommAbort(comm);
  else
    spcclCommDestroy(comm);
  return result.code != spcclSuccess ? 1 : result.matches ? 0 : 2;
}

#include "call_report.h"

#include <cinttypes>
#include <cstdio>

namespace spccl::nccl {

void CallReport::record(const char* call, const std::string& path, size_t bytes, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Totals& row = rows_[{call, path}];
  row.calls += 1;
  row.bytes += bytes;
  row.seconds += seconds;
}

void CallReport::print(uint64_t commId, int rank, int nranks, const std::string& header,
                       const spcclCounters_t* traffic) const {
  std::lock_guard<std::mutex> lock(mutex_);
  // The prefix names the communicator and the rank; the test
  // (tests/nccl/check_report.py) compares the rest across ranks.
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "[spccl-nccl %016" PRIx64 " rank %d/%d]", commId, rank,
                nranks);
  std::fprintf(stderr, "%s spccl NCCL interposer report: %s\n", prefix, header.c_str());
  std::fprintf(stderr, "%s | call | path | calls | bytes | seconds (this rank) |\n", prefix);
  if (rows_.empty()) std::fprintf(stderr, "%s | (no calls) | | 0 | 0 | 0 |\n", prefix);
  for (const auto& [key, totals] : rows_)
    std::fprintf(stderr, "%s | %s | %s | %" PRIu64 " | %" PRIu64 " | %.6f |\n", prefix,
                 key.first.c_str(), key.second.c_str(), totals.calls, totals.bytes, totals.seconds);
  if (traffic != nullptr)
    std::fprintf(stderr,
                 "%s traffic on spccl's transports (this rank): sent %" PRIu64 " bytes in %" PRIu64
                 " messages, received %" PRIu64 " bytes in %" PRIu64 " messages\n",
                 prefix, traffic->bytesSent, traffic->messagesSent, traffic->bytesReceived,
                 traffic->messagesReceived);
  std::fflush(stderr);
}

}  // namespace spccl::nccl

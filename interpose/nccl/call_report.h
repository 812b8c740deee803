// SPCCL_INTERPOSE_REPORT=1: what one communicator's calls did, printed by
// every rank at ncclCommDestroy (or ncclCommAbort): per (NCCL call, path)
// the calls, bytes and seconds of this rank. Calls and bytes are equal on
// every rank of the communicator, because the routing is (routing.h); each
// line carries the communicator's id and the rank, so the lines of one
// communicator can be compared across ranks, and each is written whole
// (one write), so ranks that share a stderr do not cut into each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "spccl.h"

namespace spccl::nccl {

class CallReport {
 public:
  // call: the NCCL function ("ncclAllReduce"); path: where it went
  // (routing.h's names, e.g. "spccl sparse: hc").
  void record(const char* call, const std::string& path, size_t bytes, double seconds);

  // header: the communicator's identity and settings, one line. traffic,
  // where spccl served calls: this rank's bytes on spccl's transports
  // since the communicator was made (they differ between ranks: a sparse
  // schedule sends what each rank's data needs), one more line.
  void print(uint64_t commId, int rank, int nranks, const std::string& header,
             const spcclCounters_t* traffic) const;

 private:
  struct Totals {
    uint64_t calls = 0;
    uint64_t bytes = 0;
    double seconds = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Totals> rows_;  // ordered: same order everywhere
};

}  // namespace spccl::nccl

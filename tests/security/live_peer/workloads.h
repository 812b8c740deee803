// The collectives a live-peer fuzzing run drives (live_peer_fuzz.cc): each
// fills this rank's input from (rank, element) alone, runs one call, and
// says whether the result equals an exact reference computed here from
// every rank's input (dense and sparse: small integers, summed exactly).
// The compressed all-reduce is lossy; its result is compared by hash with
// an unmutated run of the same job (the driver's census).
#pragma once

#include <cstdint>
#include <string>

#include "spccl.h"

namespace spccl::livefuzz {

struct WorkloadResult {
  spcclResult_t code = spcclSuccess;
  std::string error;     // spcclGetLastError when code fails
  bool checked = false;  // an exact reference exists
  bool matches = true;   // result == reference (when checked)
  std::string mismatch;  // the first differing element
  uint64_t hash = 0;     // FNV-1a of the result's bytes
};

// "dense", "sparse_coo", "sparse_bitmap", "sparse_packed",
// "compressed_twoshot", "compressed_ring"; false for another name.
bool knownWorkload(const std::string& name);
WorkloadResult runWorkload(const std::string& name, spcclComm_t comm);

}  // namespace spccl::livefuzz

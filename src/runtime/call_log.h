// The COLL line: one INFO line per collective call (SPCCL_DEBUG=INFO,
// SPCCL_DEBUG_SUBSYS with COLL), as NCCL's, with what the call moved, the
// algorithm it ran and why, its time and the bytes this rank sent:
//
//   AllReduce #18 comm 0x1c49b51c8c724e3e rank 0 nranks 4: count 1048576
//   float (4194304 bytes) op sum; algorithm ring (cost model: ring 33.83 ms
//   vs recursive_doubling 34.90 ms); 47.99 ms, sent 6291456 bytes
//
// When the line is off, a call pays one check of the log level.
#pragma once

#include <cstdint>

#include "runtime/coll_context.h"
#include "runtime/frame.h"

namespace spccl {

class Engine;

struct CallRecord {
  uint64_t seq = 0;
  double seconds = 0;
  uint64_t bytesSent = 0;  // this rank's, from the communicator's counters
  spcclResult_t result = spcclSuccess;
};

// Whether the call has an op (reductions) / a root (rooted calls); the COLL
// line and the flight recorder name them only then.
bool collReduces(CollType type);
bool collRooted(const CollSignature& signature);

// Whether calls with this signature get a COLL line now.
bool callLogEnabled(const CollSignature& signature);

void logCall(const Engine& engine, const CollSignature& signature, const CallChoice& choice,
             const CallRecord& record);

}  // namespace spccl

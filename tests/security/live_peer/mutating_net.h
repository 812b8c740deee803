// A transport table that forwards to a real one (tcp, shm) and, once
// armed, rewrites one message the engine sends (mutation.h). Installed with
// wrapTransportsForTesting (core/transport_testing.h) before the
// communicator exists, so the rendezvous, the hellos and everything before
// arming go out untouched: the handshake is genuine.
#pragma once

#include <cstdint>
#include <string>

#include "mutation.h"

namespace spccl::livefuzz {

// Wraps every transport this process starts from now on.
void installMutatingTransport(const Mutation& mutation);
// From here on messages count, and the mutation hits its message.
void armMutation();

struct MutationReport {
  uint64_t headers = 0;   // data frame headers sent since arming
  uint64_t payloads = 0;  // payload messages sent since arming
  bool applied = false;
  std::string description;
};
MutationReport mutationReport();

}  // namespace spccl::livefuzz

// Tests only: a way to put a layer between the engine and every transport
// of this process. tests/security/live_peer_fuzz.cc wraps the tables so
// that one rank, after a genuine handshake, sends mutated frames to real
// ranks (docs/security.md, "Live-peer fuzzing"). Nothing in the library
// calls it; a process that never calls it gets the tables as they are.
#pragma once

#include "spccl_net.h"

namespace spccl {

// Gets a transport's table once it started, returns the table to use
// instead (which may forward to it). Set before the first communicator.
using TransportWrapper = const spcclNet_v2_t* (*)(const spcclNet_v2_t* started);
void wrapTransportsForTesting(TransportWrapper wrap);

}  // namespace spccl

// A peer that leaves while the connections are being set up (its process
// died, or its own creation failed and closed everything) is found at once
// instead of at the creation's deadline: a connection to or from it that
// was established and is now closed or reset names it. A peer not yet
// connected is not a departed one (it may still come, until the deadline).
#pragma once

#include <string>
#include <vector>

#include "runtime/engine.h"
#include "spccl.h"

namespace spccl {

// An established connection of one peer, to look at during setup.
struct SetupConnection {
  int peer = -1;
  const spcclNet_v2_t* net = nullptr;
  void* comm = nullptr;  // a send comm whose hello went out, or an accepted recv comm
  unsigned lane = 0;     // for the message; ~0u: the control connection
};

// spcclRemoteError naming the first of `connections` whose peer closed or
// reset it (peers[peer].name: rank, host, host:port, transport), else
// spcclSuccess. Looks only at transports whose connections are sockets
// that stay open for the communicator's life (tcp, shm); never waits.
spcclResult_t checkSetupDepartures(int myRank, const std::vector<PeerConnection>& peers,
                                   const std::vector<SetupConnection>& connections);

}  // namespace spccl

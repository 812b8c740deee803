// A peer that leaves while the connections are being set up (its process
// died, or its own creation failed and closed everything) is found at once
// instead of at the creation's deadline: a connection to or from it that
// was established and is now closed or reset names it. A peer not yet
// connected is not a departed one (it may still come, until the deadline).
//
// A rank whose setup fails tells its peers why before it closes (an Abort
// frame on each control connection it opened), and a rank that sees a peer
// leave reads that reason when the peer sent one: every survivor then names
// the rank that really left, not only the first survivor that gave up.
#pragma once

#include <cstdint>
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
  bool send = false;
  unsigned lane = 0;  // for the message; ~0u: the control connection
};

// spcclRemoteError naming the first of `connections` whose peer closed or
// reset it (peers[peer].name: rank, host, host:port, transport) and the
// peer's own reason when it sent one, else spcclSuccess. Looks only at
// transports whose connections are sockets that stay open for the
// communicator's life (tcp, shm); waits only to read a departed peer's
// reason (at most kReasonWaitMs).
spcclResult_t checkSetupDepartures(int myRank, uint64_t commId,
                                   const std::vector<PeerConnection>& peers,
                                   const std::vector<SetupConnection>& connections);

// The reason peer `peer` sent before it left ("" when none came within
// kReasonWaitMs): an Abort frame on its control connection to this rank.
std::string departureReason(const PeerConnection& conn, uint64_t commId);

// Sends `why` as an Abort frame on every control send comm among
// `connections`, waiting at most kReasonFlushMs for them to leave.
void tellPeersWhy(int myRank, uint64_t commId, spcclResult_t code, const std::string& why,
                  const std::vector<SetupConnection>& connections);

}  // namespace spccl

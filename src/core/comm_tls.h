// SPCCL_TLS for a communicator: its TLS context (the PSK derived from its
// secret and id, or the certificate files), handed to its tcp listeners and
// connections, and the acceptor's check that a client's certificate names
// the host its rank announced (docs/security.md, "Encryption in transit").
#pragma once

#include <memory>
#include <string>

#include "spccl.h"
#include "spccl_net.h"

struct spcclComm;

namespace spccl {

// Reads SPCCL_TLS (refusing unknown values, naming it) and, unless off,
// sets comm->tls. `network` is the network transport the communicator
// listens on ("tcp", "shm" or a plugin): TLS runs on tcp alone, a plugin
// with TLS on is refused.
spcclResult_t makeCommTls(spcclComm* comm, const std::string& network);

// After listen or connect: a tcp comm of a communicator with TLS runs it.
// peer: the rank a send comm connects to (its announced host is what its
// certificate must name), -1 for a listener.
spcclResult_t secureTcpComm(const spcclComm& comm, const spcclNet_v2_t* net, void* netComm,
                            int peer);

// Cert mode, after the hello of an accepted connection named its rank:
// fails, naming the rank, its host and the certificate, unless the
// certificate names that host or the address the connection came from.
spcclResult_t checkTlsPeer(const spcclComm& comm, const spcclNet_v2_t* net, void* recvComm,
                           int peer);

}  // namespace spccl

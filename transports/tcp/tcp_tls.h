// How a communicator turns SPCCL_TLS on for its tcp comms (the transport
// ABI has no place for a per-communicator key): src/core/comm_tls.cc calls
// these right after listen and connect, before any isend or accept.
#pragma once

#include <memory>
#include <string>

#include "spccl.h"
#include "transports/tcp/tls_session.h"

namespace spccl::transport {

// comm is a tcp listen comm (the connections it accepts run TLS as
// servers) or a tcp send comm (a TLS client). expectedHost: cert mode, the
// host the peer rank announced; its certificate must name it or the
// address connected to.
spcclResult_t tcpUseTls(void* comm, const std::shared_ptr<TlsContext>& context,
                        const std::string& expectedHost);

// Cert mode, an accepted comm whose handshake has finished: whether the
// client's certificate names host or the address it connected from.
// *subject: the certificate's subject, for the refusal.
bool tcpTlsPeerNames(void* recvComm, const std::string& host, std::string* subject);

}  // namespace spccl::transport

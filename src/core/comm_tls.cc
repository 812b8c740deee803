#include "core/comm_tls.h"

#include "base/check.h"
#include "base/knobs.h"
#include "base/log.h"
#include "core/comm.h"
#include "transports/tcp/tcp_net.h"
#include "transports/tcp/tcp_tls.h"
#include "transports/tcp/tls_keys.h"
#include "transports/tcp/tls_session.h"

namespace spccl {

spcclResult_t makeCommTls(spcclComm* comm, const std::string& network) {
  transport::TlsSettings settings;
  SPCCL_CHECK(transport::parseTlsMode(knobString("SPCCL_TLS"), &settings.mode));
  if (settings.mode == transport::TlsMode::Off) return spcclSuccess;
  if (network == "shm") {
    SPCCL_INFO(kLogInit, "SPCCL_TLS=%s: nothing to encrypt, shm alone never leaves the host",
               transport::tlsModeName(settings.mode));
    return spcclSuccess;
  }
  if (network != "tcp")
    return SPCCL_FAIL(spcclInvalidUsage,
                      "SPCCL_TLS=%s encrypts the tcp transport only, not SPCCL_TRANSPORT=%s",
                      transport::tlsModeName(settings.mode), network.c_str());
  settings.commId = comm->commId;
  if (settings.mode == transport::TlsMode::Psk) {
    SPCCL_CHECK(transport::deriveTlsPsk(comm->secret.bytes.data(), comm->secret.size, comm->commId,
                                        &settings.psk));
  } else {
    settings.caFile = knobString("SPCCL_TLS_CA");
    settings.certFile = knobString("SPCCL_TLS_CERT");
    settings.keyFile = knobString("SPCCL_TLS_KEY");
  }
  SPCCL_CHECK(transport::TlsContext::create(settings, &comm->tls));
  SPCCL_INFO(kLogInit, "rank %d: TLS 1.3 (SPCCL_TLS=%s) on tcp connections", comm->rank,
             transport::tlsModeName(settings.mode));
  return spcclSuccess;
}

spcclResult_t secureTcpComm(const spcclComm& comm, const spcclNet_v2_t* net, void* netComm,
                            int peer) {
  if (comm.tls == nullptr || net != spcclNetTcp()) return spcclSuccess;
  const std::string host = peer >= 0 ? comm.ranks[peer].hostname : "";
  return transport::tcpUseTls(netComm, comm.tls, host);
}

spcclResult_t checkTlsPeer(const spcclComm& comm, const spcclNet_v2_t* net, void* recvComm,
                           int peer) {
  if (comm.tls == nullptr || comm.tls->mode() != transport::TlsMode::Cert || net != spcclNetTcp())
    return spcclSuccess;
  const std::string host = comm.ranks[peer].hostname;
  std::string subject;
  if (transport::tcpTlsPeerNames(recvComm, host, &subject)) return spcclSuccess;
  char where[128] = "?";
  net->describe(recvComm, where, sizeof(where));
  return SPCCL_FAIL(spcclRemoteError,
                    "rank %d: the TLS certificate of rank %d (%s, host %s) names neither that "
                    "host nor its address (certificate %s, SPCCL_TLS=cert)",
                    comm.rank, peer, where, host.c_str(), subject.c_str());
}

}  // namespace spccl

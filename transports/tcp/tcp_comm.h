// State of tcp comms and their requests, and the progress engine that
// moves framed messages ([u64 le length][payload]) over non-blocking sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/socket.h"
#include "transports/common/stream_comm.h"
#include "transports/tcp/tls_session.h"

namespace spccl::transport {

struct TcpComm;

// A listener; with SPCCL_TLS, the connections it accepts run TLS as servers.
struct TcpListenComm : CommBase {
  using CommBase::CommBase;
  std::shared_ptr<TlsContext> tlsContext;
};

struct TcpRequest {
  TcpComm* comm = nullptr;
  char* data = nullptr;
  size_t size = 0;          // payload bytes (for a receive: known once the length arrived)
  size_t capacity = 0;      // receive buffer size
  uint64_t wireLength = 0;  // the length prefix, little-endian on the wire
  size_t moved = 0;         // bytes of prefix + payload transferred so far
  bool done = false;
  size_t result = 0;
};

struct TcpComm : CommBase {
  using CommBase::CommBase;

  CommFailure failure;
  InOrderRequests<TcpRequest> requests;

  // Send side: the connection is established inside progress() (nothing blocks).
  net::SockAddr remote{};
  bool connected = false;
  int64_t connectDeadlineMs = 0;
  int64_t nextAttemptMs = 0;
  int64_t backoffMs = 10;
  int bufferBytes = 0;

  // SPCCL_TLS (tls_session.h): set on a send comm before its first isend,
  // inherited from the listener by an accepted comm. The session starts
  // once the TCP connection is up; no payload byte moves before its
  // handshake has finished.
  std::shared_ptr<TlsContext> tlsContext;
  bool tlsServer = false;
  std::string tlsExpectedHost;  // cert mode, send side: the host the peer announced
  std::unique_ptr<TlsSession> tls;
  int64_t tlsDeadlineMs = 0;
  std::vector<char> tlsStaging;  // a small message's prefix and payload, sent as one record

  spcclResult_t startConnect();
  spcclResult_t progress();
  // Records a failure reported through SPCCL_FAIL; pending requests fail with it.
  spcclResult_t fail(spcclResult_t code);

 private:
  spcclResult_t advanceConnect();
  spcclResult_t retryConnectOrFail(int err);
  spcclResult_t progressSend();
  spcclResult_t progressRecv();
  // Starts and moves the TLS handshake; *ready once bytes may flow.
  spcclResult_t advanceTls(bool* ready);
  spcclResult_t sendSome(TcpRequest& request, size_t* moved);
  spcclResult_t recvSome(char* data, size_t size, size_t* moved);
};

}  // namespace spccl::transport

// State of tcp comms and their requests, and the progress engine that
// moves framed messages ([u64 le length][payload]) over non-blocking sockets.
#pragma once

#include <cstdint>

#include "base/socket.h"
#include "transports/common/stream_comm.h"

namespace spccl::transport {

struct TcpComm;

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

  spcclResult_t startConnect();
  spcclResult_t progress();
  // Records a failure reported through SPCCL_FAIL; pending requests fail with it.
  spcclResult_t fail(spcclResult_t code);

 private:
  spcclResult_t advanceConnect();
  spcclResult_t retryConnectOrFail(int err);
  spcclResult_t progressSend();
  spcclResult_t progressRecv();
};

}  // namespace spccl::transport

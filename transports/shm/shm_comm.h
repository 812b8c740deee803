// State of shm comms and requests. Send-side progress is in shm_send.cc,
// receive-side progress in shm_recv.cc.
#pragma once

#include <sys/types.h>
#include <sys/un.h>

#include <string>

#include "transports/common/stream_comm.h"
#include "transports/shm/shm_protocol.h"

namespace spccl::transport {

struct ShmComm;

enum class ShmStage : uint8_t {
  // send side
  WriteHeader,    // header, and the payload when inline
  AwaitAnswer,    // remote descriptor written; waiting for kAck/kNak
  StreamPayload,  // the receiver refused the remote read: stream the bytes
  Finished,
  // receive side
  ReadPrefix,
  ReadAddress,
  ReadPayload,  // inline, or streamed after kNak
};

struct ShmRequest {
  ShmComm* comm = nullptr;
  char* data = nullptr;
  size_t size = 0;      // payload bytes (receive: known once the prefix arrived)
  size_t capacity = 0;  // receive buffer size
  shm::Mode mode = shm::Mode::Inline;
  ShmStage stage = ShmStage::WriteHeader;
  unsigned char header[shm::kRemoteHeaderBytes] = {};
  size_t headerSize = 0;
  size_t moved = 0;  // bytes of the current stage transferred
  bool done = false;
  size_t result = 0;
};

// Fills request.header for a message of request.size bytes sent as `mode`.
void encodeSendHeader(ShmRequest& request, shm::Mode mode);

struct ShmComm : CommBase {
  using CommBase::CommBase;

  CommFailure failure;
  InOrderRequests<ShmRequest> requests;
  pid_t peerPid = 0;

  // The hello, written (send side) or read (receive side) before any message.
  shm::Hello hello{};
  size_t helloMoved = 0;

  // Send side.
  sockaddr_un remote{};
  socklen_t remoteLen = 0;
  bool connected = false;
  int64_t connectDeadlineMs = 0;
  int64_t nextAttemptMs = 0;
  size_t inlineBytes = 0;
  // Until the first kAck the sender does not know whether remote reads are
  // allowed, and a kNak must be followed by that message's bytes, so nothing
  // is written behind an unanswered descriptor. After a kAck descriptors
  // are pipelined; after a kNak every message goes inline.
  bool remoteReadsConfirmed = false;
  bool remoteReadsRefused = false;

  // Receive side: answers not yet written to the socket.
  std::string pendingAnswers;

  spcclResult_t startConnect();
  spcclResult_t progress();
  spcclResult_t fail(spcclResult_t code);
  // Whether the send side has bytes it may write now (for pollFd).
  bool hasWritableWork();
  bool awaitsAnswer();

 private:
  spcclResult_t advanceConnect();
  spcclResult_t progressSend();
  spcclResult_t readAnswers();
  spcclResult_t writeRequests();
  spcclResult_t progressRecv();
  spcclResult_t readHello();
  spcclResult_t readInto(void* data, size_t size, size_t* done, bool* complete);
  spcclResult_t copyFromPeer(ShmRequest& request, bool* refused);
  spcclResult_t flushAnswers();
};

}  // namespace spccl::transport

// State of shm comms and requests. Send-side progress is in shm_send.cc,
// receive-side progress in shm_recv.cc.
#pragma once

#include <sys/types.h>
#include <sys/un.h>

#include <memory>
#include <string>

#include "transports/common/stream_comm.h"
#include "transports/shm/shm_protocol.h"

namespace spccl::transport {

struct ShmComm;
class DeviceReceiver;

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
  unsigned char header[shm::kDeviceHeaderBytes] = {};
  size_t headerSize = 0;
  size_t moved = 0;  // bytes of the current stage transferred
  bool done = false;
  size_t result = 0;
};

// Fills request.header for a message of request.size bytes sent as `mode`
// (Remote: request.data's address; Device: *device).
void encodeSendHeader(ShmRequest& request, shm::Mode mode,
                      const shm::DeviceDescriptor* device = nullptr);

struct ShmComm : CommBase {
  using CommBase::CommBase;

  CommFailure failure;
  InOrderRequests<ShmRequest> requests;
  pid_t peerPid = 0;
  // A cuda_ipc comm (shm_device.h): payloads in device memory travel as
  // Device messages. Plain shm comms refuse them.
  bool deviceIpc = false;

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
  // Receive side of a cuda_ipc comm, made at its first Device message.
  // shared_ptr: destroyed where DeviceReceiver is complete.
  std::shared_ptr<DeviceReceiver> deviceReceiver;

  spcclResult_t startConnect();
  spcclResult_t progress();
  spcclResult_t fail(spcclResult_t code);
  // Whether the send side has bytes it may write now (for pollFd).
  bool hasWritableWork();
  bool awaitsAnswer();
  // Whether nothing may be written behind this request while it awaits
  // its answer: a Remote descriptor before the first kAck (a kNak must be
  // followed by its bytes).
  bool gatesLaterRequests(const ShmRequest& request) const;

 private:
  spcclResult_t advanceConnect();
  spcclResult_t progressSend();
  spcclResult_t readAnswers();
  spcclResult_t writeRequests();
  spcclResult_t progressRecv();
  spcclResult_t readHello();
  spcclResult_t readInto(void* data, size_t size, size_t* done, bool* complete);
  spcclResult_t copyFromPeer(ShmRequest& request, bool* refused);
  spcclResult_t copyFromPeerDevice(ShmRequest& request, std::string* refusal);
  // After a read of the sender's memory: fails if the sender had closed
  // the connection by then. A sender closes with a send unanswered only
  // when it gave the message up (its call failed, core/engine's abort), and
  // may then reuse the buffer: the bytes read may not be the message.
  spcclResult_t requireSenderStillThere(const ShmRequest& request);
  spcclResult_t flushAnswers();
};

}  // namespace spccl::transport

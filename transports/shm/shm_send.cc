// Send side of the shm transport: writes hello, headers and inline
// payloads; reads the receiver's answers to remote descriptors.
#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "base/socket.h"
#include "transports/shm/shm_comm.h"

namespace spccl::transport {

void encodeSendHeader(ShmRequest& request, shm::Mode mode, const shm::DeviceDescriptor* device) {
  request.mode = mode;
  uint64_t length = request.size;
  std::memcpy(request.header, &length, sizeof(length));
  request.header[sizeof(length)] = static_cast<unsigned char>(mode);
  request.headerSize = shm::kPrefixBytes;
  if (mode == shm::Mode::Remote) {
    uint64_t address = reinterpret_cast<uintptr_t>(request.data);
    std::memcpy(request.header + shm::kPrefixBytes, &address, sizeof(address));
    request.headerSize = shm::kRemoteHeaderBytes;
  }
  if (mode == shm::Mode::Device) {
    std::memcpy(request.header + shm::kPrefixBytes, device, sizeof(*device));
    request.headerSize = shm::kDeviceHeaderBytes;
  }
}

spcclResult_t ShmComm::progressSend() {
  if (!connected) {
    spcclResult_t res = advanceConnect();
    if (res != spcclSuccess || !connected) return res;
  }
  while (helloMoved < sizeof(hello)) {
    iovec iov{reinterpret_cast<char*>(&hello) + helloMoved, sizeof(hello) - helloMoved};
    size_t moved = 0;
    spcclResult_t res = net::sendvNow(fd, &iov, 1, &moved, peerName);
    if (res != spcclSuccess) return fail(res);
    if (moved == 0) return spcclSuccess;
    helloMoved += moved;
  }
  SPCCL_CHECK(readAnswers());
  SPCCL_CHECK(writeRequests());
  while (requests.inFlight() > 0 && requests.oldest().stage == ShmStage::Finished) {
    ShmRequest& request = requests.oldest();
    request.done = true;
    request.result = request.size;
    requests.finishOldest();
  }
  return spcclSuccess;
}

bool ShmComm::gatesLaterRequests(const ShmRequest& request) const {
  // A Device message is never streamed, whatever its answer.
  return request.mode == shm::Mode::Remote && !remoteReadsConfirmed;
}

bool ShmComm::awaitsAnswer() {
  for (size_t i = 0; i < requests.inFlight(); ++i)
    if (requests.inFlightAt(i).stage == ShmStage::AwaitAnswer) return true;
  return false;
}

bool ShmComm::hasWritableWork() {
  if (!connected || helloMoved < sizeof(hello)) return true;
  for (size_t i = 0; i < requests.inFlight(); ++i) {
    const ShmRequest& request = requests.inFlightAt(i);
    ShmStage stage = request.stage;
    if (stage == ShmStage::WriteHeader || stage == ShmStage::StreamPayload) return true;
    if (stage == ShmStage::AwaitAnswer && gatesLaterRequests(request)) return false;
  }
  return false;
}

spcclResult_t ShmComm::readAnswers() {
  for (;;) {
    size_t expected = 0;
    for (size_t i = 0; i < requests.inFlight(); ++i)
      if (requests.inFlightAt(i).stage == ShmStage::AwaitAnswer) ++expected;
    if (expected == 0) return spcclSuccess;
    char answers[SPCCL_NET_MAX_REQUESTS];
    size_t got = 0;
    spcclResult_t res = net::recvNow(fd, answers, expected, &got, peerName);
    if (res != spcclSuccess) return fail(res);
    if (got == 0) return spcclSuccess;
    size_t next = 0;
    for (size_t i = 0; i < requests.inFlight() && next < got; ++i) {
      ShmRequest& request = requests.inFlightAt(i);
      if (request.stage != ShmStage::AwaitAnswer) continue;
      char answer = answers[next++];
      if (request.mode == shm::Mode::Device) {
        // An answer about device memory says nothing about remote reads.
        if (answer == shm::kAck) {
          request.stage = ShmStage::Finished;
          continue;
        }
        return fail(SPCCL_FAIL(spcclRemoteError,
                               "cuda_ipc: %s could not copy %zu bytes of this process's device "
                               "memory (its error says why)",
                               peerName.c_str(), request.size));
      }
      if (answer == shm::kAck) {
        remoteReadsConfirmed = true;
        request.stage = ShmStage::Finished;
      } else if (answer == shm::kNak && !remoteReadsConfirmed) {
        static std::atomic<bool> logged{false};
        if (!logged.exchange(true)) {
          SPCCL_INFO(kLogNet,
                     "shm: %s may not read this process's memory (process_vm_readv refused); "
                     "streaming large messages through the socket instead",
                     peerName.c_str());
        }
        remoteReadsRefused = true;
        request.stage = ShmStage::StreamPayload;
        request.moved = 0;
        // Descriptors not written yet would only be refused too.
        for (size_t later = i + 1; later < requests.inFlight(); ++later) {
          ShmRequest& queued = requests.inFlightAt(later);
          if (queued.stage == ShmStage::WriteHeader && queued.moved == 0 &&
              queued.mode == shm::Mode::Remote)
            encodeSendHeader(queued, shm::Mode::Inline);
        }
      } else {
        return fail(SPCCL_FAIL(spcclInternalError, "shm: unexpected answer 0x%02x from %s",
                               static_cast<unsigned char>(answer), peerName.c_str()));
      }
    }
  }
}

spcclResult_t ShmComm::writeRequests() {
  for (size_t i = 0; i < requests.inFlight(); ++i) {
    ShmRequest& request = requests.inFlightAt(i);
    if (request.stage == ShmStage::Finished) continue;
    if (request.stage == ShmStage::AwaitAnswer) {
      if (gatesLaterRequests(request)) return spcclSuccess;
      continue;
    }
    bool streaming = request.stage == ShmStage::StreamPayload;
    size_t headerBytes = streaming ? 0 : request.headerSize;
    size_t payloadBytes = streaming || request.mode == shm::Mode::Inline ? request.size : 0;
    while (request.moved < headerBytes + payloadBytes) {
      iovec iov[2];
      int count = 0;
      if (request.moved < headerBytes)
        iov[count++] = {request.header + request.moved, headerBytes - request.moved};
      size_t payloadDone = request.moved > headerBytes ? request.moved - headerBytes : 0;
      if (payloadBytes > payloadDone)
        iov[count++] = {request.data + payloadDone, payloadBytes - payloadDone};
      size_t moved = 0;
      spcclResult_t res = net::sendvNow(fd, iov, count, &moved, peerName);
      if (res != spcclSuccess) return fail(res);
      if (moved == 0) return spcclSuccess;
      request.moved += moved;
    }
    request.moved = 0;
    if (streaming || request.mode == shm::Mode::Inline) {
      request.stage = ShmStage::Finished;
    } else {
      request.stage = ShmStage::AwaitAnswer;
      if (gatesLaterRequests(request)) return spcclSuccess;
    }
  }
  return spcclSuccess;
}

}  // namespace spccl::transport

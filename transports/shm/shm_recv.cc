// Receive side of the shm transport: reads the hello and the message
// headers, copies large payloads straight out of the sender's memory with
// process_vm_readv, and answers each such descriptor.
#include <poll.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "base/socket.h"
#include "transports/shm/shm_comm.h"
#include "transports/shm/shm_device.h"
#include "transports/shm/shm_testing.h"

namespace spccl::transport {

namespace {

std::atomic<uint64_t> gInlineMessages{0};
std::atomic<uint64_t> gRemoteReads{0};
std::atomic<uint64_t> gStreamedFallback{0};
std::atomic<uint64_t> gDeviceCopies{0};
std::atomic<bool> gRefuseRemoteReads{false};

// Large enough that the syscall cost vanishes, small enough to retry a
// partial copy without redoing much.
constexpr size_t kRemoteReadChunk = 64u << 20;

}  // namespace

ShmReceiveStats shmReceiveStats() {
  return {gInlineMessages.load(), gRemoteReads.load(), gStreamedFallback.load(),
          gDeviceCopies.load()};
}

void shmRefuseRemoteReadsForTesting(bool refuse) { gRefuseRemoteReads = refuse; }

spcclResult_t ShmComm::readInto(void* data, size_t size, size_t* done, bool* complete) {
  while (*done < size) {
    size_t moved = 0;
    spcclResult_t res =
        net::recvNow(fd, static_cast<char*>(data) + *done, size - *done, &moved, peerName);
    if (res != spcclSuccess) return fail(res);
    if (moved == 0) break;
    *done += moved;
  }
  *complete = *done == size;
  return spcclSuccess;
}

spcclResult_t ShmComm::flushAnswers() {
  while (!pendingAnswers.empty()) {
    iovec iov{pendingAnswers.data(), pendingAnswers.size()};
    size_t moved = 0;
    spcclResult_t res = net::sendvNow(fd, &iov, 1, &moved, peerName);
    if (res != spcclSuccess) return fail(res);
    if (moved == 0) break;
    pendingAnswers.erase(0, moved);
  }
  return spcclSuccess;
}

spcclResult_t ShmComm::readHello() {
  bool complete = false;
  SPCCL_CHECK(readInto(&hello, sizeof(hello), &helloMoved, &complete));
  if (!complete) return spcclSuccess;
  if (hello.magic != shm::kHelloMagic)
    return fail(SPCCL_FAIL(spcclRemoteError, "shm: %s is not an spccl shm sender (bad hello)",
                           peerName.c_str()));
  // The kernel's SO_PEERCRED pid is in our pid namespace; the announced
  // one differs only when the peer lives in another pid namespace.
  if (hello.pid != peerPid)
    SPCCL_INFO(kLogNet, "shm: %s announced pid %d (another pid namespace?)", peerName.c_str(),
               hello.pid);
  return spcclSuccess;
}

spcclResult_t ShmComm::copyFromPeer(ShmRequest& request, bool* refused) {
  uint64_t address = 0;
  std::memcpy(&address, request.header + shm::kPrefixBytes, sizeof(address));
  size_t copied = 0;
  *refused = false;
  while (copied < request.size) {
    size_t chunk = std::min(request.size - copied, kRemoteReadChunk);
    iovec local{request.data + copied, chunk};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the sender's address, for process_vm_readv
    iovec remoteRange{reinterpret_cast<void*>(address + copied), chunk};
    ssize_t got = -1;
    errno = EPERM;
    if (!gRefuseRemoteReads) got = process_vm_readv(peerPid, &local, 1, &remoteRange, 1, 0);
    if (got > 0) {
      copied += static_cast<size_t>(got);
      continue;
    }
    int err = got == 0 ? EFAULT : errno;
    if (err == EPERM || err == ENOSYS) {
      *refused = true;
      return spcclSuccess;
    }
    if (err == ESRCH)
      return fail(
          SPCCL_FAIL(spcclRemoteError, "shm: %s exited during a transfer", peerName.c_str()));
    return fail(SPCCL_FAIL(err == EFAULT ? spcclRemoteError : spcclSystemError,
                           "shm: reading %zu bytes at 0x%llx from %s failed: %s", request.size,
                           static_cast<unsigned long long>(address), peerName.c_str(),
                           strerror(err)));
  }
  return spcclSuccess;
}

spcclResult_t ShmComm::copyFromPeerDevice(ShmRequest& request, std::string* refusal) {
  shm::DeviceDescriptor descriptor{};
  std::memcpy(&descriptor, request.header + shm::kPrefixBytes, sizeof(descriptor));
  if (!deviceReceiver) deviceReceiver = std::make_shared<DeviceReceiver>(peerName);
  refusal->clear();
  if (deviceReceiver->copy(descriptor, request.data, request.size) != spcclSuccess)
    *refusal = threadLastError();
  return spcclSuccess;
}

spcclResult_t ShmComm::requireSenderStillThere(const ShmRequest& request) {
  // The close is visible here as soon as the sender's close(2) returned,
  // whatever is still unread in the socket: so if it is not, the sender
  // still held the buffer when the read ended.
  pollfd pfd{fd, POLLRDHUP, 0};
  if (poll(&pfd, 1, 0) <= 0 || (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0)
    return spcclSuccess;
  return fail(SPCCL_FAIL(spcclRemoteError,
                         "shm: %s gave up a %zu-byte message while it was being read (its call "
                         "failed); the bytes read are not used",
                         peerName.c_str(), request.size));
}

spcclResult_t ShmComm::progressRecv() {
  SPCCL_CHECK(flushAnswers());
  if (helloMoved < sizeof(hello)) {
    SPCCL_CHECK(readHello());
    if (helloMoved < sizeof(hello)) return spcclSuccess;
  }
  while (requests.inFlight() > 0) {
    ShmRequest& request = requests.oldest();
    bool complete = false;
    if (request.stage == ShmStage::ReadPrefix) {
      SPCCL_CHECK(readInto(request.header, shm::kPrefixBytes, &request.moved, &complete));
      if (!complete) return spcclSuccess;
      uint64_t length = 0;
      std::memcpy(&length, request.header, sizeof(length));
      request.mode = static_cast<shm::Mode>(request.header[sizeof(length)]);
      const bool known = request.mode == shm::Mode::Inline || request.mode == shm::Mode::Remote ||
                         (request.mode == shm::Mode::Device && deviceIpc);
      if (!known)
        return fail(SPCCL_FAIL(spcclRemoteError, "shm: bad message mode %d from %s",
                               static_cast<int>(request.mode), peerName.c_str()));
      if (length > request.capacity)
        return fail(SPCCL_FAIL(
            spcclRemoteError, "oversize message from %s: %llu bytes > capacity %zu",
            peerName.c_str(), static_cast<unsigned long long>(length), request.capacity));
      request.size = length;
      request.stage =
          request.mode == shm::Mode::Inline ? ShmStage::ReadPayload : ShmStage::ReadAddress;
      if (request.mode == shm::Mode::Inline) request.moved = 0;
    }
    if (request.stage == ShmStage::ReadAddress && request.mode == shm::Mode::Device) {
      SPCCL_CHECK(readInto(request.header, shm::kDeviceHeaderBytes, &request.moved, &complete));
      if (!complete) return spcclSuccess;
      std::string refusal;
      SPCCL_CHECK(copyFromPeerDevice(request, &refusal));
      if (refusal.empty() && request.size > 0) SPCCL_CHECK(requireSenderStillThere(request));
      // The sender waits for the answer either way; a refusal then fails
      // both ends (the CPU cannot stream device memory instead).
      pendingAnswers.push_back(refusal.empty() ? shm::kAck : shm::kNak);
      SPCCL_CHECK(flushAnswers());
      if (!refusal.empty()) return fail(SPCCL_FAIL(spcclSystemError, "%s", refusal.c_str()));
      request.moved = 0;
      request.stage = ShmStage::Finished;
      ++gDeviceCopies;
    }
    if (request.stage == ShmStage::ReadAddress) {
      SPCCL_CHECK(readInto(request.header, shm::kRemoteHeaderBytes, &request.moved, &complete));
      if (!complete) return spcclSuccess;
      bool refused = false;
      SPCCL_CHECK(copyFromPeer(request, &refused));
      // (An empty message reads nothing: nothing to have changed.)
      if (!refused && request.size > 0) SPCCL_CHECK(requireSenderStillThere(request));
      pendingAnswers.push_back(refused ? shm::kNak : shm::kAck);
      SPCCL_CHECK(flushAnswers());
      request.moved = 0;
      request.stage = refused ? ShmStage::ReadPayload : ShmStage::Finished;
      if (!refused) ++gRemoteReads;
    }
    if (request.stage == ShmStage::ReadPayload) {
      SPCCL_CHECK(readInto(request.data, request.size, &request.moved, &complete));
      if (!complete) return spcclSuccess;
      ++(request.mode == shm::Mode::Inline ? gInlineMessages : gStreamedFallback);
    }
    request.done = true;
    request.result = request.size;
    requests.finishOldest();
  }
  return spcclSuccess;
}

}  // namespace spccl::transport

#include "transports/tcp/tcp_comm.h"

#include <endian.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"

namespace spccl::transport {

namespace {
constexpr size_t kPrefixBytes = sizeof(uint64_t);
}

spcclResult_t TcpComm::fail(spcclResult_t code) {
  requests.abandonInFlight();
  return failure.record(code);
}

spcclResult_t TcpComm::progress() {
  if (failure.failed()) return failure.code();
  return kind == CommKind::Send ? progressSend() : progressRecv();
}

// ---- connection setup (send side) ----

spcclResult_t TcpComm::startConnect() {
  fd = socket(remote.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(
        SPCCL_FAIL(spcclSystemError, "socket for %s: %s", peerName.c_str(), strerror(errno)));
  net::setNoDelay(fd);
  net::setBufferSizes(fd, bufferBytes);  // before connect, so the window scale matches
  if (connect(fd, &remote.sa, net::sockAddrLen(remote)) == 0) {
    connected = true;
    return spcclSuccess;
  }
  if (errno == EINPROGRESS) return spcclSuccess;
  return retryConnectOrFail(errno);
}

spcclResult_t TcpComm::retryConnectOrFail(int err) {
  close(fd);
  fd = -1;
  int64_t now = monotonicMs();
  if (net::isRetryableConnectError(err) && now < connectDeadlineMs) {
    nextAttemptMs = now + backoffMs;
    backoffMs = std::min<int64_t>(backoffMs * 2, 200);
    return spcclSuccess;
  }
  if (net::isRetryableConnectError(err))
    return fail(SPCCL_FAIL(spcclTimeout, "connect to %s: no connection before the deadline (%s)",
                           peerName.c_str(), strerror(err)));
  return fail(SPCCL_FAIL(net::peerErrorCode(err), "connect to %s failed: %s", peerName.c_str(),
                         strerror(err)));
}

spcclResult_t TcpComm::advanceConnect() {
  if (fd < 0) return monotonicMs() < nextAttemptMs ? spcclSuccess : startConnect();
  pollfd pfd{fd, POLLOUT, 0};
  if (poll(&pfd, 1, 0) == 0) {
    if (monotonicMs() < connectDeadlineMs) return spcclSuccess;
    return retryConnectOrFail(ETIMEDOUT);
  }
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return retryConnectOrFail(err);
  connected = true;
  return spcclSuccess;
}

// ---- data ----

spcclResult_t TcpComm::progressSend() {
  if (!connected) {
    spcclResult_t res = advanceConnect();
    if (res != spcclSuccess || !connected) return res;
  }
  while (requests.inFlight() > 0) {
    TcpRequest& request = requests.oldest();
    while (request.moved < kPrefixBytes + request.size) {
      // Prefix and whole remaining payload in one call: the kernel takes
      // what fits and no message is ever copied in user space.
      iovec iov[2];
      int count = 0;
      if (request.moved < kPrefixBytes)
        iov[count++] = {reinterpret_cast<char*>(&request.wireLength) + request.moved,
                        kPrefixBytes - request.moved};
      size_t payloadDone = request.moved > kPrefixBytes ? request.moved - kPrefixBytes : 0;
      if (request.size > payloadDone)
        iov[count++] = {request.data + payloadDone, request.size - payloadDone};
      size_t moved = 0;
      spcclResult_t res = net::sendvNow(fd, iov, count, &moved, peerName);
      if (res != spcclSuccess) return fail(res);
      if (moved == 0) return spcclSuccess;
      request.moved += moved;
    }
    request.done = true;
    request.result = request.size;
    requests.finishOldest();
  }
  return spcclSuccess;
}

spcclResult_t TcpComm::progressRecv() {
  while (requests.inFlight() > 0) {
    TcpRequest& request = requests.oldest();
    while (request.moved < kPrefixBytes) {
      size_t moved = 0;
      spcclResult_t res =
          net::recvNow(fd, reinterpret_cast<char*>(&request.wireLength) + request.moved,
                       kPrefixBytes - request.moved, &moved, peerName);
      if (res != spcclSuccess) return fail(res);
      if (moved == 0) return spcclSuccess;
      request.moved += moved;
    }
    uint64_t length = le64toh(request.wireLength);
    if (length > request.capacity)
      return fail(
          SPCCL_FAIL(spcclRemoteError, "oversize message from %s: %llu bytes > capacity %zu",
                     peerName.c_str(), static_cast<unsigned long long>(length), request.capacity));
    request.size = length;
    while (request.moved < kPrefixBytes + request.size) {
      size_t payloadDone = request.moved - kPrefixBytes;
      size_t moved = 0;
      spcclResult_t res = net::recvNow(fd, request.data + payloadDone, request.size - payloadDone,
                                       &moved, peerName);
      if (res != spcclSuccess) return fail(res);
      if (moved == 0) return spcclSuccess;
      request.moved += moved;
    }
    request.done = true;
    request.result = request.size;
    requests.finishOldest();
  }
  return spcclSuccess;
}

}  // namespace spccl::transport

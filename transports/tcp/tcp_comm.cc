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
// With TLS a message up to one record (16 KiB of plaintext) goes out as a
// single record, its length prefix included: one encryption and one
// send(2) instead of two. Records never span two messages, so between
// messages the receiver's TLS layer holds nothing but what read-ahead took.
constexpr size_t kTlsRecordPlaintext = 16384;
}  // namespace

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
  // A peer publishes its handle only once it listens: a refusal means
  // nothing listens there any more (the peer died or left its creation),
  // which no retry mends. Unreachable and timed out (a link cut) still retry.
  if (err == ECONNREFUSED)
    return fail(SPCCL_FAIL(spcclRemoteError,
                           "connect to %s refused: its listener is closed (the peer died or "
                           "left)",
                           peerName.c_str()));
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
  bool ready = false;
  SPCCL_CHECK(advanceTls(&ready));
  if (!ready) return spcclSuccess;
  while (requests.inFlight() > 0) {
    TcpRequest& request = requests.oldest();
    while (request.moved < kPrefixBytes + request.size) {
      size_t moved = 0;
      spcclResult_t res = sendSome(request, &moved);
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
  bool ready = false;
  SPCCL_CHECK(advanceTls(&ready));
  if (!ready) return spcclSuccess;
  while (requests.inFlight() > 0) {
    TcpRequest& request = requests.oldest();
    while (request.moved < kPrefixBytes) {
      size_t moved = 0;
      spcclResult_t res = recvSome(reinterpret_cast<char*>(&request.wireLength) + request.moved,
                                   kPrefixBytes - request.moved, &moved);
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
      spcclResult_t res = recvSome(request.data + payloadDone, request.size - payloadDone, &moved);
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

// ---- bytes: plain or through TLS ----

spcclResult_t TcpComm::advanceTls(bool* ready) {
  *ready = tlsContext == nullptr || (tls != nullptr && tls->established());
  if (*ready) return spcclSuccess;
  if (tls == nullptr) {
    const std::string ip = kind == CommKind::Send ? net::hostString(remote) : "";
    spcclResult_t res =
        TlsSession::create(tlsContext, fd, tlsServer, peerName, tlsExpectedHost, ip, &tls);
    if (res != spcclSuccess) return fail(res);
  }
  bool done = false;
  spcclResult_t res = tls->handshake(&done);
  if (res != spcclSuccess) return fail(res);
  if (!done && monotonicMs() > tlsDeadlineMs)
    return fail(SPCCL_FAIL(spcclTimeout,
                           "TLS handshake with %s (SPCCL_TLS=%s): not finished before the deadline",
                           peerName.c_str(), tlsModeName(tlsContext->mode())));
  *ready = done;
  return spcclSuccess;
}

spcclResult_t TcpComm::sendSome(TcpRequest& request, size_t* moved) {
  const char* prefix = reinterpret_cast<const char*>(&request.wireLength);
  if (tls == nullptr) {
    // Prefix and whole remaining payload in one call: the kernel takes
    // what fits and no message is ever copied in user space.
    iovec iov[2];
    int count = 0;
    if (request.moved < kPrefixBytes)
      iov[count++] = {const_cast<char*>(prefix) + request.moved, kPrefixBytes - request.moved};
    size_t payloadDone = request.moved > kPrefixBytes ? request.moved - kPrefixBytes : 0;
    if (request.size > payloadDone)
      iov[count++] = {request.data + payloadDone, request.size - payloadDone};
    return net::sendvNow(fd, iov, count, moved, peerName);
  }
  if (kPrefixBytes + request.size <= kTlsRecordPlaintext) {
    if (request.moved == 0) {
      tlsStaging.assign(prefix, prefix + kPrefixBytes);
      tlsStaging.insert(tlsStaging.end(), request.data, request.data + request.size);
    }
    return tls->write(tlsStaging.data() + request.moved, tlsStaging.size() - request.moved, moved);
  }
  if (request.moved < kPrefixBytes)
    return tls->write(prefix + request.moved, kPrefixBytes - request.moved, moved);
  size_t payloadDone = request.moved - kPrefixBytes;
  return tls->write(request.data + payloadDone, request.size - payloadDone, moved);
}

spcclResult_t TcpComm::recvSome(char* data, size_t size, size_t* moved) {
  if (tls == nullptr) return net::recvNow(fd, data, size, moved, peerName);
  return tls->read(data, size, moved);
}

}  // namespace spccl::transport

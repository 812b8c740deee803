// Comm-wide pieces of the shm transport: failure, dispatch, and the
// non-blocking connection setup of the send side.
#include "transports/shm/shm_comm.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/socket.h"

namespace spccl::transport {

namespace {
constexpr int64_t kConnectRetryMs = 5;
}

spcclResult_t ShmComm::fail(spcclResult_t code) {
  requests.abandonInFlight();
  return failure.record(code);
}

spcclResult_t ShmComm::progress() {
  if (failure.failed()) return failure.code();
  return kind == CommKind::Send ? progressSend() : progressRecv();
}

spcclResult_t ShmComm::startConnect() {
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(
        SPCCL_FAIL(spcclSystemError, "shm socket for %s: %s", peerName.c_str(), strerror(errno)));
  if (connect(fd, reinterpret_cast<sockaddr*>(&remote), remoteLen) == 0) {
    connected = true;
    hello = {shm::kHelloMagic, static_cast<int32_t>(getpid())};
    return spcclSuccess;
  }
  int err = errno;
  close(fd);
  fd = -1;
  // EAGAIN: the listener's backlog is full. ECONNREFUSED is final: a peer
  // publishes its handle only once it listens, so nobody listens there any
  // more (the peer died or left; core/setup_departures.h).
  bool retryable = err == EAGAIN;
  int64_t now = monotonicMs();
  if (retryable && now < connectDeadlineMs) {
    nextAttemptMs = now + kConnectRetryMs;
    return spcclSuccess;
  }
  return fail(SPCCL_FAIL(retryable ? spcclTimeout : net::peerErrorCode(err),
                         "shm connect to %s failed: %s", peerName.c_str(), strerror(err)));
}

spcclResult_t ShmComm::advanceConnect() {
  if (fd >= 0 || monotonicMs() < nextAttemptMs) return spcclSuccess;
  return startConnect();
}

}  // namespace spccl::transport

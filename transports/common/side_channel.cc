#include "transports/common/side_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "base/clock.h"

namespace spccl::transport {

namespace {
bool wouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }
}  // namespace

SideChannel::~SideChannel() { close(); }

void SideChannel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

spcclResult_t SideChannel::connect(const net::SockAddr& addr, int64_t deadlineMs) {
  peerName_ = net::toString(addr);
  deadlineMs_ = deadlineMs;
  fd_ = socket(addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    return SPCCL_FAIL(spcclSystemError, "side channel to %s: socket: %s", peerName_.c_str(),
                      strerror(errno));
  if (::connect(fd_, &addr.sa, net::sockAddrLen(addr)) != 0 && errno != EINPROGRESS)
    return SPCCL_FAIL(spcclRemoteError, "connecting to %s: %s", peerName_.c_str(), strerror(errno));
  return spcclSuccess;
}

void SideChannel::adopt(int fd, const net::SockAddr& peer, int64_t deadlineMs) {
  fd_ = fd;
  peerName_ = net::toString(peer);
  deadlineMs_ = deadlineMs;
  connected_ = true;
}

void SideChannel::queueSend(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  out_.insert(out_.end(), bytes, bytes + size);
}

void SideChannel::expectTotal(size_t bytes) { in_.resize(bytes); }

spcclResult_t SideChannel::progress(Status* status) {
  *status = Status::InProgress;
  if (!connected_) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) == 1) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0)
        return SPCCL_FAIL(spcclRemoteError, "connecting to %s: %s", peerName_.c_str(),
                          strerror(err));
      connected_ = true;
    }
  }
  if (connected_) {
    while (sent_ < out_.size()) {
      ssize_t n = send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && wouldBlock(errno)) break;
      if (n < 0)
        return SPCCL_FAIL(spcclRemoteError, "sending setup data to %s: %s", peerName_.c_str(),
                          strerror(errno));
      sent_ += static_cast<size_t>(n);
    }
    while (received_ < in_.size()) {
      ssize_t n = recv(fd_, in_.data() + received_, in_.size() - received_, MSG_DONTWAIT);
      if (n < 0 && wouldBlock(errno)) break;
      if (n <= 0)
        return SPCCL_FAIL(spcclRemoteError, "%s closed the connection during setup%s%s",
                          peerName_.c_str(), n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
      received_ += static_cast<size_t>(n);
    }
    if (sent_ == out_.size() && received_ == in_.size()) {
      *status = Status::Done;
      return spcclSuccess;
    }
  }
  if (monotonicMs() > deadlineMs_)
    return SPCCL_FAIL(spcclTimeout, "connection setup with %s passed its deadline",
                      peerName_.c_str());
  return spcclSuccess;
}

short SideChannel::pollEvents() const {
  if (!connected_ || sent_ < out_.size()) return POLLOUT;
  return POLLIN;
}

bool SideChannel::peerGone() {
  if (gone_ || fd_ < 0) return gone_;
  int64_t now = monotonicMs();
  if (now - lastAliveCheckMs_ < kAliveCheckMs) return false;
  lastAliveCheckMs_ = now;
  char byte = 0;
  ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && wouldBlock(errno)) return false;
  gone_ = true;  // EOF, a reset, or bytes nobody should send after setup
  return true;
}

}  // namespace spccl::transport

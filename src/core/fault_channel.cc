#include "core/fault_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"

namespace spccl {

namespace {

spcclResult_t macOf(const FaultChannelKeys& keys, const FaultMessage& message, Mac* out) {
  FaultHeader header = message.header;
  header.mac = Mac{};
  std::vector<unsigned char> covered(sizeof(header) + message.payload.size());
  std::memcpy(covered.data(), &header, sizeof(header));
  if (!message.payload.empty())
    std::memcpy(covered.data() + sizeof(header), message.payload.data(), message.payload.size());
  HandshakeContext context;
  context.role = HandshakeRole::FaultMessage;
  context.commId = header.commId;
  context.srcRank = header.src;
  context.dstRank = header.dst;
  context.lane = header.kind;
  return handshakeMac(keys.secret, context, header.nonce, header.replyTo, covered.data(),
                      covered.size(), out);
}

// One non-blocking connect, waited for until the deadline. A refused
// connection is not retried: the listener of a live rank is always up.
spcclResult_t connectOnce(const net::SockAddr& to, const std::string& peerName,
                          const Deadline& deadline, int* fd) {
  int sock = ::socket(to.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (sock < 0) return SPCCL_FAIL(spcclSystemError, "socket(): %s", strerror(errno));
  int rc = ::connect(sock, &to.sa, net::sockAddrLen(to));
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd pfd{sock, POLLOUT, 0};
    int ready = 0;
    do {
      ready = ::poll(&pfd, 1, static_cast<int>(deadline.remainingMs()));
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      ::close(sock);
      return SPCCL_FAIL(spcclTimeout, "connecting to %s (%s): no answer within %lld ms",
                        peerName.c_str(), net::toString(to).c_str(),
                        static_cast<long long>(deadline.timeoutMs()));
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &len);
    rc = err == 0 ? 0 : -1;
    errno = err;
  }
  if (rc != 0) {
    int err = errno;
    ::close(sock);
    return SPCCL_FAIL(net::peerErrorCode(err), "connecting to %s (%s) failed: %s", peerName.c_str(),
                      net::toString(to).c_str(), strerror(err));
  }
  net::setNoDelay(sock);
  *fd = sock;
  return spcclSuccess;
}

spcclResult_t sendSealed(int fd, const FaultMessage& message, const Deadline& deadline,
                         const std::string& peerName) {
  SPCCL_CHECK(net::sendAll(fd, &message.header, sizeof(message.header), deadline, peerName));
  if (!message.payload.empty())
    SPCCL_CHECK(
        net::sendAll(fd, message.payload.data(), message.payload.size(), deadline, peerName));
  return spcclSuccess;
}

}  // namespace

spcclResult_t sealFaultMessage(const FaultChannelKeys& keys, FaultMessage* message) {
  message->header.commId = keys.commId;
  message->header.src = keys.rank;
  message->header.payloadBytes = static_cast<uint32_t>(message->payload.size());
  SPCCL_CHECK(freshNonce(&message->header.nonce));
  return macOf(keys, *message, &message->header.mac);
}

spcclResult_t sendFaultMessage(const FaultChannelKeys& keys, const net::SockAddr& to,
                               const std::string& peerName, FaultMessage message,
                               const Deadline& deadline, FaultMessage* reply) {
  SPCCL_CHECK(sealFaultMessage(keys, &message));
  int fd = -1;
  SPCCL_CHECK(connectOnce(to, peerName, deadline, &fd));
  spcclResult_t res = sendSealed(fd, message, deadline, peerName);
  if (res == spcclSuccess && reply != nullptr) {
    res = receiveFaultMessage(keys, fd, deadline, reply);
    if (res == spcclSuccess &&
        (reply->header.kind != static_cast<uint16_t>(FaultKind::Reply) ||
         reply->header.src != message.header.dst || reply->header.replyTo != message.header.nonce))
      res = SPCCL_FAIL(spcclRemoteError, "%s answered a fault-channel query with a wrong reply",
                       peerName.c_str());
  }
  ::close(fd);
  return res;
}

spcclResult_t checkFaultHeader(const FaultChannelKeys& keys, const FaultHeader& h) {
  if (h.magic != FaultHeader{}.magic || h.version != FaultHeader{}.version ||
      h.commId != keys.commId || h.dst != keys.rank || h.payloadBytes > kMaxFaultPayload)
    return SPCCL_FAIL(spcclRemoteError,
                      "fault channel of rank %d: a message not for this communicator or rank "
                      "(comm %016llx, to rank %d), dropped",
                      keys.rank, static_cast<unsigned long long>(h.commId), h.dst);
  return spcclSuccess;
}

spcclResult_t checkFaultSeal(const FaultChannelKeys& keys, const FaultMessage& message) {
  Mac expected;
  SPCCL_CHECK(macOf(keys, message, &expected));
  if (!macEqual(expected, message.header.mac))
    return SPCCL_FAIL(spcclRemoteError,
                      "fault channel of rank %d: a message claiming to be from rank %d failed "
                      "authentication, dropped",
                      keys.rank, message.header.src);
  return spcclSuccess;
}

spcclResult_t receiveFaultMessage(const FaultChannelKeys& keys, int fd, const Deadline& deadline,
                                  FaultMessage* out) {
  const std::string from = "a fault-channel peer";
  SPCCL_CHECK(net::recvAll(fd, &out->header, sizeof(out->header), deadline, from));
  SPCCL_CHECK(checkFaultHeader(keys, out->header));
  out->payload.resize(out->header.payloadBytes);
  if (!out->payload.empty())
    SPCCL_CHECK(net::recvAll(fd, out->payload.data(), out->payload.size(), deadline, from));
  return checkFaultSeal(keys, *out);
}

}  // namespace spccl

// The accept of the plugins that listen on a TCP socket (tcp, ib, ucx):
// a plugin's accept must not block (include/spccl_net.h), so it takes at
// most the one connection its non-blocking listener has pending.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/socket.h"

namespace spccl::transport {

// The pending connection as a non-blocking, close-on-exec socket. None yet
// (or the accept interrupted, or the connection aborted by its peer):
// success with *fd = -1, and the caller's accept is called again. Any other
// error fails naming the transport ("tcp") and the listener's address.
inline spcclResult_t acceptPending(int listenFd, const char* transport,
                                   const std::string& listenerName, net::SockAddr* peer, int* fd) {
  *peer = net::SockAddr{};
  socklen_t len = sizeof(*peer);
  *fd = accept4(listenFd, &peer->sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (*fd >= 0) return spcclSuccess;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
    return spcclSuccess;
  return SPCCL_FAIL(spcclSystemError, "%s accept on %s: %s", transport, listenerName.c_str(),
                    strerror(errno));
}

}  // namespace spccl::transport

#include "base/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "base/check.h"
#include "base/log.h"

namespace spccl::net {

// ---- addresses ----

socklen_t sockAddrLen(const SockAddr& addr) {
  return addr.sa.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

int sockAddrPort(const SockAddr& addr) {
  if (addr.sa.sa_family == AF_INET6) return ntohs(addr.sin6.sin6_port);
  if (addr.sa.sa_family == AF_INET) return ntohs(addr.sin.sin_port);
  return -1;
}

void setSockAddrPort(SockAddr* addr, int port) {
  if (addr->sa.sa_family == AF_INET6) addr->sin6.sin6_port = htons(static_cast<uint16_t>(port));
  if (addr->sa.sa_family == AF_INET) addr->sin.sin_port = htons(static_cast<uint16_t>(port));
}

std::string toString(const SockAddr& addr) {
  char host[INET6_ADDRSTRLEN] = "";
  if (addr.sa.sa_family == AF_INET) {
    inet_ntop(AF_INET, &addr.sin.sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(sockAddrPort(addr));
  }
  if (addr.sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &addr.sin6.sin6_addr, host, sizeof(host));
    std::string text = std::string("[") + host;
    char scope[IF_NAMESIZE] = "";
    if (addr.sin6.sin6_scope_id != 0 && if_indextoname(addr.sin6.sin6_scope_id, scope) != nullptr)
      text += std::string("%") + scope;
    return text + "]:" + std::to_string(sockAddrPort(addr));
  }
  return "<address family " + std::to_string(addr.sa.sa_family) + ">";
}

std::string hostString(const SockAddr& addr) {
  char host[INET6_ADDRSTRLEN] = "";
  if (addr.sa.sa_family == AF_INET) inet_ntop(AF_INET, &addr.sin.sin_addr, host, sizeof(host));
  if (addr.sa.sa_family == AF_INET6) inet_ntop(AF_INET6, &addr.sin6.sin6_addr, host, sizeof(host));
  return host;
}

spcclResult_t parseHostPort(const std::string& text, SockAddr* out) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return SPCCL_FAIL(spcclInvalidArgument, "address '%s': expected [ipv6]:port", text.c_str());
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
      return SPCCL_FAIL(spcclInvalidArgument, "address '%s': expected host:port", text.c_str());
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "address '%s': write IPv6 addresses in brackets, [addr]:port",
                        text.c_str());
  }
  char* end = nullptr;
  long portNumber = port.empty() ? -1 : std::strtol(port.c_str(), &end, 10);
  if (host.empty() || portNumber < 0 || portNumber > 65535 || *end != '\0')
    return SPCCL_FAIL(spcclInvalidArgument, "address '%s': bad host or port", text.c_str());

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "address '%s': cannot resolve '%s': %s", text.c_str(),
                      host.c_str(), gai_strerror(rc));
  *out = SockAddr{};
  std::memcpy(out, found->ai_addr, std::min<size_t>(found->ai_addrlen, sizeof(SockAddr)));
  freeaddrinfo(found);
  setSockAddrPort(out, static_cast<int>(portNumber));
  return spcclSuccess;
}

// ---- interface selection ----

IfnameSpec parseIfnameSpec(const std::string& spec) {
  IfnameSpec parsed;
  size_t pos = 0;
  // NCCL writes "^=" ; "=^" is accepted too since both read naturally.
  for (int flag = 0; flag < 2 && pos < spec.size(); ++flag) {
    if (spec[pos] == '^' && !parsed.exclude) {
      parsed.exclude = true;
      ++pos;
    } else if (spec[pos] == '=' && !parsed.exact) {
      parsed.exact = true;
      ++pos;
    }
  }
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string name = spec.substr(pos, comma - pos);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) parsed.names.push_back(name);
    pos = comma + 1;
  }
  return parsed;
}

int parseSocketFamily(const std::string& text) {
  if (text.empty()) return AF_UNSPEC;
  if (text == "AF_INET" || text == "4" || text == "ipv4") return AF_INET;
  if (text == "AF_INET6" || text == "6" || text == "ipv6") return AF_INET6;
  return -1;
}

bool ifnameMatches(const IfnameSpec& spec, const std::string& ifname) {
  if (spec.names.empty()) return true;  // as NCCL: an empty list selects everything
  bool listed = std::any_of(spec.names.begin(), spec.names.end(), [&](const std::string& name) {
    return spec.exact ? ifname == name : ifname.compare(0, name.size(), name) == 0;
  });
  return listed != spec.exclude;
}

namespace {

bool isLinkLocal(const SockAddr& addr) {
  return addr.sa.sa_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&addr.sin6.sin6_addr);
}

// Up interfaces matching spec, one address per interface name (IPv4 first
// when family is AF_UNSPEC), link-local IPv6 only if allowed.
std::vector<Interface> collect(ifaddrs* list, const IfnameSpec& spec, int family,
                               bool allowLinkLocal) {
  std::vector<Interface> found;
  for (int pass : {AF_INET, AF_INET6}) {
    if (family != AF_UNSPEC && family != pass) continue;
    for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
      if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != pass) continue;
      if (!(entry->ifa_flags & IFF_UP)) continue;
      if (!ifnameMatches(spec, entry->ifa_name)) continue;
      Interface candidate;
      candidate.name = entry->ifa_name;
      candidate.addr = SockAddr{};
      std::memcpy(&candidate.addr, entry->ifa_addr,
                  pass == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
      if (isLinkLocal(candidate.addr) && !allowLinkLocal) continue;
      setSockAddrPort(&candidate.addr, 0);
      bool seen = std::any_of(found.begin(), found.end(),
                              [&](const Interface& i) { return i.name == candidate.name; });
      if (!seen) found.push_back(candidate);
    }
  }
  return found;
}

std::vector<Interface> collectPreferringRoutable(ifaddrs* list, const IfnameSpec& spec,
                                                 int family) {
  std::vector<Interface> found = collect(list, spec, family, false);
  if (found.empty()) found = collect(list, spec, family, true);
  return found;
}

}  // namespace

spcclResult_t findInterfaces(const std::string& spec, int family, std::vector<Interface>* out) {
  ifaddrs* list = nullptr;
  SPCCL_SYSCHECK(getifaddrs(&list), "getifaddrs");
  if (spec.empty()) {
    // Default as NCCL: docker bridges and loopback only when nothing else is up.
    *out = collectPreferringRoutable(list, parseIfnameSpec("^docker,lo"), family);
    if (out->empty()) *out = collectPreferringRoutable(list, parseIfnameSpec("lo,docker"), family);
  } else {
    *out = collectPreferringRoutable(list, parseIfnameSpec(spec), family);
  }
  freeifaddrs(list);
  return spcclSuccess;
}

spcclResult_t pickInterface(const std::string& spec, int family, Interface* out) {
  std::vector<Interface> found;
  SPCCL_CHECK(findInterfaces(spec, family, &found));
  if (found.empty()) {
    const char* familyName = family == AF_INET    ? "AF_INET"
                             : family == AF_INET6 ? "AF_INET6"
                                                  : "any";
    return SPCCL_FAIL(spcclInvalidArgument,
                      "no network interface is up and matches SPCCL_SOCKET_IFNAME='%s' (family %s)",
                      spec.c_str(), familyName);
  }
  *out = found.front();
  SPCCL_INFO(kLogNet, "using interface %s %s", out->name.c_str(), toString(out->addr).c_str());
  return spcclSuccess;
}

// ---- connection setup ----

namespace {

// A poll that returns 0 before the deadline expired (a cancellable
// deadline's slice, core/clock.h) is not a timeout: callers poll again.
int pollTimeout(const Deadline& deadline) {
  return static_cast<int>(std::min<int64_t>(deadline.waitSliceMs(), INT_MAX));
}

}  // namespace

bool isRetryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH || err == EHOSTUNREACH ||
         err == EAGAIN || err == ECONNRESET;
}

namespace {

// One attempt; returns 0 or the errno that made it fail.
int connectOnce(const SockAddr& addr, const Deadline& deadline, int* fd) {
  int sock = socket(addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (sock < 0) return errno;
  int err = 0;
  if (connect(sock, &addr.sa, sockAddrLen(addr)) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd pfd{sock, POLLOUT, 0};
      int ready;
      do ready = poll(&pfd, 1, pollTimeout(deadline));
      while ((ready < 0 && errno == EINTR) || (ready == 0 && !deadline.expired()));
      socklen_t len = sizeof(err);
      if (ready == 0)
        err = ETIMEDOUT;
      else if (ready < 0 || getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    }
  }
  if (err != 0) {
    close(sock);
    return err;
  }
  *fd = sock;
  return 0;
}

}  // namespace

spcclResult_t listenOn(const SockAddr& bindAddr, int backlog, int* fd, SockAddr* bound) {
  std::string where = toString(bindAddr);
  int sock = socket(bindAddr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return SPCCL_FAIL(spcclSystemError, "socket for %s: %s", where.c_str(), strerror(errno));
  int one = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(sock, &bindAddr.sa, sockAddrLen(bindAddr)) != 0 || listen(sock, backlog) != 0) {
    int err = errno;
    close(sock);
    return SPCCL_FAIL(spcclSystemError, "cannot listen on %s: %s", where.c_str(), strerror(err));
  }
  socklen_t len = sizeof(SockAddr);
  *bound = SockAddr{};
  if (getsockname(sock, &bound->sa, &len) != 0) {
    int err = errno;
    close(sock);
    return SPCCL_FAIL(spcclSystemError, "getsockname on %s: %s", where.c_str(), strerror(err));
  }
  *fd = sock;
  return spcclSuccess;
}

spcclResult_t connectWithRetry(const SockAddr& addr, const Deadline& deadline, int* fd,
                               bool refusedIsFinal) {
  // Peers start at different times: a refused connection usually means the
  // listener is not up yet, so back off briefly and try again.
  int64_t backoffMs = 10;
  int lastError = 0;
  do {
    lastError = connectOnce(addr, deadline, fd);
    if (lastError == 0) {
      SPCCL_CHECK(setNonBlocking(*fd, false));
      setNoDelay(*fd);
      return spcclSuccess;
    }
    if (!isRetryableConnectError(lastError) || (refusedIsFinal && lastError == ECONNREFUSED))
      return SPCCL_FAIL(peerErrorCode(lastError), "connect to %s failed: %s",
                        toString(addr).c_str(), strerror(lastError));
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min<int64_t>(backoffMs, deadline.remainingMs())));
    backoffMs = std::min<int64_t>(backoffMs * 2, 200);
  } while (!deadline.expired());
  return SPCCL_FAIL(spcclTimeout, "connect to %s: no connection within %lld ms (last error: %s)",
                    toString(addr).c_str(), static_cast<long long>(deadline.timeoutMs()),
                    strerror(lastError));
}

spcclResult_t acceptNow(int listenFd, int* fd, SockAddr* peer) {
  *fd = -1;
  for (;;) {
    socklen_t len = sizeof(SockAddr);
    *peer = SockAddr{};
    int sock = accept4(listenFd, &peer->sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (sock >= 0) {
      setNoDelay(sock);
      *fd = sock;
      return spcclSuccess;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return spcclSuccess;
    // Out of descriptors (EMFILE, ENFILE) is not the listener's failure:
    // the caller tries again after closing some.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      return spcclSuccess;
    return SPCCL_FAIL(spcclSystemError, "accept failed: %s", strerror(errno));
  }
}

spcclResult_t acceptWithDeadline(int listenFd, const Deadline& deadline, int* fd, SockAddr* peer) {
  for (;;) {
    pollfd pfd{listenFd, POLLIN, 0};
    int ready = poll(&pfd, 1, pollTimeout(deadline));
    if (ready < 0 && errno != EINTR) SPCCL_SYSCHECK(ready, "poll on listening socket");
    if (ready > 0) {
      socklen_t len = sizeof(SockAddr);
      *peer = SockAddr{};
      int sock = accept4(listenFd, &peer->sa, &len, SOCK_CLOEXEC);
      if (sock >= 0) {
        setNoDelay(sock);
        *fd = sock;
        return spcclSuccess;
      }
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
        return SPCCL_FAIL(spcclSystemError, "accept failed: %s", strerror(errno));
    }
    if (deadline.expired()) {
      SockAddr local{};
      socklen_t len = sizeof(local);
      getsockname(listenFd, &local.sa, &len);
      return SPCCL_FAIL(spcclTimeout, "no connection arrived on %s within %lld ms",
                        toString(local).c_str(), static_cast<long long>(deadline.timeoutMs()));
    }
  }
}

// ---- data transfer ----

spcclResult_t peerErrorCode(int err) {
  switch (err) {
    case ECONNRESET:
    case EPIPE:
    case ECONNREFUSED:
    case ECONNABORTED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case ENOTCONN:
      return spcclRemoteError;
    default:
      return spcclSystemError;
  }
}

static spcclResult_t transferFailed(int err, const char* what, const std::string& peerName) {
  if (err == ECONNRESET || err == EPIPE)
    return SPCCL_FAIL(spcclRemoteError, "peer %s closed the connection (%s)", peerName.c_str(),
                      strerror(err));
  return SPCCL_FAIL(peerErrorCode(err), "%s %s failed: %s", what, peerName.c_str(), strerror(err));
}

spcclResult_t sendvNow(int fd, const iovec* iov, int iovCount, size_t* moved,
                       const std::string& peerName) {
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(iov);
  message.msg_iovlen = static_cast<size_t>(iovCount);
  ssize_t sent;
  do sent = sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (sent < 0 && errno == EINTR);
  *moved = 0;
  if (sent >= 0)
    *moved = static_cast<size_t>(sent);
  else if (errno != EAGAIN && errno != EWOULDBLOCK)
    return transferFailed(errno, "send to", peerName);
  return spcclSuccess;
}

spcclResult_t recvNow(int fd, void* data, size_t size, size_t* moved, const std::string& peerName) {
  *moved = 0;
  if (size == 0) return spcclSuccess;
  ssize_t got;
  do got = recv(fd, data, size, MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  if (got == 0)
    return SPCCL_FAIL(spcclRemoteError, "peer %s closed the connection", peerName.c_str());
  if (got > 0)
    *moved = static_cast<size_t>(got);
  else if (errno != EAGAIN && errno != EWOULDBLOCK)
    return transferFailed(errno, "recv from", peerName);
  return spcclSuccess;
}

// Blocking transfers are the non-blocking ones plus poll(), so that a
// deadline bounds them whatever the fd's blocking mode.
template <typename Step>
static spcclResult_t transferAll(int fd, size_t size, short events, const Deadline& deadline,
                                 const char* direction, const std::string& peerName, Step step) {
  size_t done = 0;
  while (done < size) {
    size_t moved = 0;
    SPCCL_CHECK(step(done, &moved));
    done += moved;
    if (done == size || moved > 0) continue;
    pollfd pfd{fd, events, 0};
    int ready = poll(&pfd, 1, pollTimeout(deadline));
    if (ready < 0 && errno != EINTR) SPCCL_SYSCHECK(ready, "poll");
    if (ready == 0 && deadline.cancelled())
      return SPCCL_FAIL(spcclTimeout, "%s %s: the wait was cancelled (%zu of %zu bytes done)",
                        direction, peerName.c_str(), done, size);
    if (ready == 0 && deadline.expired())
      return SPCCL_FAIL(spcclTimeout, "%s %s timed out after %lld ms (%zu of %zu bytes done)",
                        direction, peerName.c_str(), static_cast<long long>(deadline.timeoutMs()),
                        done, size);
  }
  return spcclSuccess;
}

spcclResult_t sendAll(int fd, const void* data, size_t size, const Deadline& deadline,
                      const std::string& peerName) {
  const char* bytes = static_cast<const char*>(data);
  return transferAll(fd, size, POLLOUT, deadline, "send to", peerName,
                     [&](size_t done, size_t* moved) {
                       iovec iov{const_cast<char*>(bytes + done), size - done};
                       return sendvNow(fd, &iov, 1, moved, peerName);
                     });
}

spcclResult_t recvAll(int fd, void* data, size_t size, const Deadline& deadline,
                      const std::string& peerName) {
  char* bytes = static_cast<char*>(data);
  return transferAll(fd, size, POLLIN, deadline, "recv from", peerName,
                     [&](size_t done, size_t* moved) {
                       return recvNow(fd, bytes + done, size - done, moved, peerName);
                     });
}

// ---- options ----

spcclResult_t setNonBlocking(int fd, bool nonBlocking) {
  int flags = fcntl(fd, F_GETFL);
  SPCCL_SYSCHECK(flags, "fcntl(F_GETFL)");
  flags = nonBlocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  SPCCL_SYSCHECK(fcntl(fd, F_SETFL, flags), "fcntl(F_SETFL)");
  return spcclSuccess;
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void setBufferSizes(int fd, int bytes) {
  if (bytes <= 0) return;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

}  // namespace spccl::net

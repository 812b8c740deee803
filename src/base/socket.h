// Socket helpers shared by the bootstrap and the tcp transport: addresses,
// interface selection (SPCCL_SOCKET_IFNAME, NCCL syntax), listen/connect,
// and blocking I/O that always has a deadline. IPv4 and IPv6.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/clock.h"
#include "spccl.h"

namespace spccl::net {

union SockAddr {
  sockaddr sa;
  sockaddr_in sin;
  sockaddr_in6 sin6;
};

socklen_t sockAddrLen(const SockAddr& addr);
int sockAddrPort(const SockAddr& addr);
void setSockAddrPort(SockAddr* addr, int port);
// "10.0.0.1:5000" or "[fe80::1%eth0]:5000".
std::string toString(const SockAddr& addr);
// The address alone, without the port: "10.0.0.1", "fe80::1".
std::string hostString(const SockAddr& addr);
// Accepts "host:port", "[v6]:port", "v4addr:port"; resolves names.
spcclResult_t parseHostPort(const std::string& text, SockAddr* out);

// SPCCL_SOCKET_IFNAME syntax, as NCCL_SOCKET_IFNAME: a comma-separated list
// of prefixes ("eth,ib"); a leading '^' excludes the listed ones; a leading
// '=' (after '^' if both) makes the names exact instead of prefixes.
struct IfnameSpec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};
IfnameSpec parseIfnameSpec(const std::string& spec);
// SPCCL_SOCKET_FAMILY: "" -> AF_UNSPEC, "AF_INET"/"4" -> AF_INET,
// "AF_INET6"/"6" -> AF_INET6; anything else -> -1.
int parseSocketFamily(const std::string& text);
bool ifnameMatches(const IfnameSpec& spec, const std::string& ifname);

struct Interface {
  std::string name;
  SockAddr addr;  // port 0
};

// Interfaces that are up and match spec (empty spec: everything except
// docker* and lo, falling back to lo when nothing else exists). family is
// AF_INET, AF_INET6 or AF_UNSPEC (both; IPv4 first). Link-local IPv6
// addresses are skipped unless nothing else matches.
spcclResult_t findInterfaces(const std::string& spec, int family, std::vector<Interface>* out);
// The first of findInterfaces(), or an error naming the spec.
spcclResult_t pickInterface(const std::string& spec, int family, Interface* out);

// Binds (SO_REUSEADDR) and listens; bindAddr's port may be 0. *bound gets
// the actual address.
spcclResult_t listenOn(const SockAddr& bindAddr, int backlog, int* fd, SockAddr* bound);
// Connects, retrying refused/unreachable until the deadline.
// The errno values worth another connect attempt (listener not up yet, ...).
bool isRetryableConnectError(int err);
// refusedIsFinal: a refusal fails at once (spcclRemoteError), for a
// listener known to have been up (so nothing listens there any more).
spcclResult_t connectWithRetry(const SockAddr& addr, const Deadline& deadline, int* fd,
                               bool refusedIsFinal = false);
spcclResult_t acceptWithDeadline(int listenFd, const Deadline& deadline, int* fd, SockAddr* peer);
// One accept that never waits: *fd is -1 when no connection is pending.
// The accepted socket is non-blocking, close-on-exec, TCP_NODELAY.
spcclResult_t acceptNow(int listenFd, int* fd, SockAddr* peer);
// Blocking full transfers with poll(); errors and timeouts name `peerName`.
spcclResult_t sendAll(int fd, const void* data, size_t size, const Deadline& deadline,
                      const std::string& peerName);
spcclResult_t recvAll(int fd, void* data, size_t size, const Deadline& deadline,
                      const std::string& peerName);

// Non-blocking transfers for progress engines: one system call that moves
// what the socket takes now; *moved is 0 when it would block. A closed or
// reset connection (EOF included) is spcclRemoteError naming `peerName`.
spcclResult_t sendvNow(int fd, const iovec* iov, int iovCount, size_t* moved,
                       const std::string& peerName);
spcclResult_t recvNow(int fd, void* data, size_t size, size_t* moved, const std::string& peerName);
// spcclRemoteError for errno values that mean the peer or the path to it
// failed (reset, refused, unreachable, ...), spcclSystemError otherwise.
spcclResult_t peerErrorCode(int err);

spcclResult_t setNonBlocking(int fd, bool nonBlocking);
void setNoDelay(int fd);
// SO_SNDBUF/SO_RCVBUF; best effort.
void setBufferSizes(int fd, int bytes);

}  // namespace spccl::net

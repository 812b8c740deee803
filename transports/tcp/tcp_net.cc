// The spcclNet_v2_t table of the tcp transport. Its devices are the first
// SPCCL_TOPO_RAILS interfaces that SPCCL_SOCKET_IFNAME / SPCCL_SOCKET_FAMILY
// match (one address each); the handle a listener publishes is its bound
// address on its device. A connection leaves through whatever interface
// routes to the peer's address, so each rail needs its own subnet (as on
// the testbed: tests/netns/netlab up --rails).
#include "transports/tcp/tcp_net.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/knobs.h"
#include "base/log.h"
#include "transports/common/pending_accept.h"
#include "transports/tcp/tcp_comm.h"
#include "transports/tcp/tcp_tls.h"

namespace spccl::transport {
namespace {

constexpr uint32_t kTcpHandleMagic = 0x53505443;  // "SPTC"

struct TcpHandle {
  uint32_t magic;
  net::SockAddr addr;
};
static_assert(sizeof(TcpHandle) <= SPCCL_NET_HANDLE_MAXSIZE);

struct TcpState {
  bool initialized = false;
  std::vector<net::Interface> devices;  // one address per interface, in discovery order
  int bufferBytes = 0;
  int timeoutMs = 60000;
};
TcpState gTcp;

CommBase* asComm(void* comm) { return static_cast<CommBase*>(comm); }
TcpComm* asTcpComm(void* comm) { return static_cast<TcpComm*>(asComm(comm)); }

// The first `rails` distinct interfaces among the matches (an interface
// with several addresses is listed once per address).
std::vector<net::Interface> firstInterfaces(const std::vector<net::Interface>& found, int rails) {
  std::vector<net::Interface> chosen;
  for (const net::Interface& candidate : found) {
    if (static_cast<int>(chosen.size()) >= rails) break;
    bool seen = false;
    for (const net::Interface& c : chosen) seen = seen || c.name == candidate.name;
    if (!seen) chosen.push_back(candidate);
  }
  return chosen;
}

// Reads a small sysfs attribute of a network interface; "" if absent.
std::string interfaceAttribute(const std::string& ifname, const char* attribute) {
  std::string path = "/sys/class/net/" + ifname + "/" + attribute;
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return "";
  char line[256] = {};
  bool ok = std::fgets(line, sizeof(line), file) != nullptr;
  std::fclose(file);
  if (!ok) return "";
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

spcclResult_t tcpInit(const spcclNetInitArgs_v2_t* args) {
  std::string ifname = args != nullptr && args->socketIfname != nullptr
                           ? args->socketIfname
                           : knobString("SPCCL_SOCKET_IFNAME");
  std::string familyText = knobString("SPCCL_SOCKET_FAMILY");
  int family = net::parseSocketFamily(familyText);
  if (family < 0)
    return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_SOCKET_FAMILY=%s: expected AF_INET or AF_INET6",
                      familyText.c_str());
  int64_t rails = knobInt("SPCCL_TOPO_RAILS");
  if (rails < 1 || rails > SPCCL_NET_MAX_DEVICES)
    return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_TOPO_RAILS=%lld: expected 1..%d",
                      static_cast<long long>(rails), SPCCL_NET_MAX_DEVICES);
  TcpState state;
  std::vector<net::Interface> found;
  SPCCL_CHECK(net::findInterfaces(ifname, family, &found));
  if (found.empty()) {
    net::Interface unused;
    return net::pickInterface(ifname, family, &unused);  // its error names the spec
  }
  state.devices = firstInterfaces(found, static_cast<int>(rails));
  state.bufferBytes = static_cast<int>(knobInt("SPCCL_SOCKET_BUFFER_BYTES"));
  state.timeoutMs = args != nullptr && args->timeoutMs > 0
                        ? args->timeoutMs
                        : static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  state.initialized = true;
  gTcp = state;
  for (size_t d = 0; d < gTcp.devices.size(); ++d)
    SPCCL_INFO(kLogNet, "tcp device %zu: %s %s", d, gTcp.devices[d].name.c_str(),
               net::toString(gTcp.devices[d].addr).c_str());
  if (static_cast<int64_t>(gTcp.devices.size()) < rails)
    SPCCL_INFO(kLogNet,
               "tcp: SPCCL_TOPO_RAILS=%lld but only %zu interface(s) match "
               "SPCCL_SOCKET_IFNAME='%s'",
               static_cast<long long>(rails), gTcp.devices.size(), ifname.c_str());
  return spcclSuccess;
}

spcclResult_t requireInit(const char* op) {
  if (!gTcp.initialized) return SPCCL_FAIL(spcclInvalidUsage, "tcp %s before init", op);
  return spcclSuccess;
}

spcclResult_t requireDevice(const char* op, int dev) {
  SPCCL_CHECK(requireInit(op));
  if (dev < 0 || dev >= static_cast<int>(gTcp.devices.size()))
    return SPCCL_FAIL(spcclInvalidArgument, "tcp %s: dev %d is not one of the %zu devices", op, dev,
                      gTcp.devices.size());
  return spcclSuccess;
}

spcclResult_t tcpDevices(int* ndev) {
  SPCCL_CHECK(requireInit("devices"));
  if (ndev == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "tcp devices: ndev is NULL");
  *ndev = static_cast<int>(gTcp.devices.size());
  return spcclSuccess;
}

spcclResult_t tcpGetProperties(int dev, spcclNetProperties_v2_t* props) {
  SPCCL_CHECK(requireDevice("getProperties", dev));
  if (props == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "tcp getProperties: props is NULL");
  *props = spcclNetProperties_v2_t{};
  const std::string& name = gTcp.devices[dev].name;
  std::snprintf(props->name, sizeof(props->name), "%s", name.c_str());
  // realpath writes up to PATH_MAX bytes into a caller's buffer (glibc's
  // _FORTIFY_SOURCE aborts when it is shorter): let it allocate.
  const std::string link = "/sys/class/net/" + name + "/device";
  if (char* pci = realpath(link.c_str(), nullptr); pci != nullptr) {
    std::snprintf(props->pciPath, sizeof(props->pciPath), "%s", pci);
    std::free(pci);
  }
  props->speedMbps = std::max(0, std::atoi(interfaceAttribute(name, "speed").c_str()));
  props->ptrSupport = SPCCL_PTR_HOST;
  return spcclSuccess;
}

spcclResult_t tcpListen(int dev, void* handle, void** listenComm) {
  SPCCL_CHECK(requireDevice("listen", dev));
  if (handle == nullptr || listenComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp listen: handle and listenComm must not be NULL");
  auto comm = std::make_unique<TcpListenComm>(CommKind::Listen);
  net::SockAddr bound;
  // A deep accept queue: connections that flood it before the engine starts
  // accepting (docs/security.md) must not make a rank's SYN wait for a
  // retransmission; the engine drops those it cannot authenticate.
  SPCCL_CHECK(net::listenOn(gTcp.devices[dev].addr, SOMAXCONN, &comm->fd, &bound));
  net::setBufferSizes(comm->fd, gTcp.bufferBytes);  // inherited by accepted sockets
  SPCCL_CHECK(net::setNonBlocking(comm->fd, true));
  comm->peerName = net::toString(bound);
  TcpHandle published{kTcpHandleMagic, bound};
  std::memset(handle, 0, SPCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &published, sizeof(published));
  *listenComm = static_cast<CommBase*>(comm.release());
  return spcclSuccess;
}

spcclResult_t tcpConnect(int dev, const void* handle, void** sendComm) {
  SPCCL_CHECK(requireDevice("connect", dev));
  if (handle == nullptr || sendComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp connect: handle and sendComm must not be NULL");
  TcpHandle peer;
  std::memcpy(&peer, handle, sizeof(peer));
  if (peer.magic != kTcpHandleMagic)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp connect: the handle is not a tcp handle");
  auto comm = std::make_unique<TcpComm>(CommKind::Send);
  comm->remote = peer.addr;
  comm->peerName = net::toString(peer.addr);
  comm->bufferBytes = gTcp.bufferBytes;
  comm->connectDeadlineMs = monotonicMs() + gTcp.timeoutMs;
  comm->startConnect();  // a failure is kept in the comm and reported by isend/test
  *sendComm = static_cast<CommBase*>(comm.release());
  return spcclSuccess;
}

spcclResult_t tcpAccept(void* listenComm, void** recvComm) {
  if (listenComm == nullptr || recvComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp accept: listenComm and recvComm must not be NULL");
  CommBase* listener = asComm(listenComm);
  *recvComm = nullptr;
  net::SockAddr peer;
  int fd = -1;
  SPCCL_CHECK(acceptPending(listener->fd, "tcp", listener->peerName, &peer, &fd));
  if (fd < 0) return spcclSuccess;  // none pending yet
  net::setNoDelay(fd);
  auto comm = std::make_unique<TcpComm>(CommKind::Recv);
  comm->fd = fd;
  comm->connected = true;
  comm->peerName = net::toString(peer);
  comm->tlsContext = static_cast<TcpListenComm*>(listener)->tlsContext;
  comm->tlsServer = true;
  comm->tlsDeadlineMs = monotonicMs() + gTcp.timeoutMs;
  *recvComm = static_cast<CommBase*>(comm.release());
  return spcclSuccess;
}

spcclResult_t tcpIsend(void* sendComm, const void* data, size_t size, void*, void** request) {
  if (sendComm == nullptr || request == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "tcp isend: NULL comm, request or data");
  TcpComm* comm = asTcpComm(sendComm);
  TcpRequest* posted = nullptr;
  SPCCL_CHECK(postRequest(comm, "tcp isend", &posted));
  posted->data = static_cast<char*>(const_cast<void*>(data));
  posted->size = size;
  posted->wireLength = htole64(size);
  comm->progress();  // start at once when the socket has room; failures stay in the comm
  *request = posted;
  return spcclSuccess;
}

spcclResult_t tcpIrecv(void* recvComm, void* data, size_t capacity, void*, void** request) {
  if (recvComm == nullptr || request == nullptr || (data == nullptr && capacity > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "tcp irecv: NULL comm, request or data");
  TcpComm* comm = asTcpComm(recvComm);
  TcpRequest* posted = nullptr;
  SPCCL_CHECK(postRequest(comm, "tcp irecv", &posted));
  posted->data = static_cast<char*>(data);
  posted->capacity = capacity;
  comm->progress();
  *request = posted;
  return spcclSuccess;
}

spcclResult_t tcpTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp test: NULL request or done");
  return testRequest<TcpComm>(static_cast<TcpRequest*>(request), done, size);
}

spcclResult_t tcpPollFd(void* comm, int* fd, short* events) {
  if (comm == nullptr || fd == nullptr || events == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp pollFd: NULL argument");
  CommBase* base = asComm(comm);
  *fd = base->fd;
  *events = POLLIN;
  if (base->kind != CommKind::Listen) {
    TcpComm* tcp = asTcpComm(comm);
    // During the TLS handshake either side may wait for either direction.
    if (tcp->connected && tcp->tlsContext != nullptr && !tcp->failure.failed() &&
        (tcp->tls == nullptr || !tcp->tls->established())) {
      *events = tcp->tls == nullptr ? static_cast<short>(POLLOUT) : tcp->tls->wantedEvents();
      return spcclSuccess;
    }
  }
  if (base->kind == CommKind::Send) {
    TcpComm* send = asTcpComm(comm);
    // POLLERR/POLLHUP are always reported, so an idle send comm waits on no events.
    bool wantsToWrite = !send->connected || send->requests.inFlight() > 0;
    *events = wantsToWrite && !send->failure.failed() ? POLLOUT : 0;
  }
  return spcclSuccess;
}

spcclResult_t tcpDescribe(void* comm, char* buf, size_t len) {
  return describePeer("tcp", comm, buf, len);
}

const spcclNet_v2_t kTcpNet = {"tcp",
                               SPCCL_NET_ABI_VERSION,
                               tcpInit,
                               tcpDevices,
                               tcpGetProperties,
                               tcpListen,
                               tcpConnect,
                               tcpAccept,
                               regMrNotNeeded,
                               nullptr,
                               deregMrNotNeeded,
                               tcpIsend,
                               tcpIrecv,
                               tcpTest,
                               tcpPollFd,
                               tcpDescribe,
                               closeComm<TcpComm>,
                               closeComm<TcpComm>,
                               closeComm<TcpListenComm>};

}  // namespace

spcclResult_t tcpUseTls(void* comm, const std::shared_ptr<TlsContext>& context,
                        const std::string& expectedHost) {
  if (comm == nullptr || context == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcpUseTls: NULL comm or context");
  CommBase* base = asComm(comm);
  if (base->kind == CommKind::Listen) {
    static_cast<TcpListenComm*>(base)->tlsContext = context;
    return spcclSuccess;
  }
  TcpComm* send = asTcpComm(comm);
  if (base->kind != CommKind::Send || send->requests.inFlight() > 0 || send->tls != nullptr)
    return SPCCL_FAIL(spcclInternalError, "tcpUseTls on %s: not a fresh send comm",
                      base->peerName.c_str());
  send->tlsContext = context;
  send->tlsExpectedHost = expectedHost;
  send->tlsDeadlineMs = send->connectDeadlineMs;
  return spcclSuccess;
}

bool tcpTlsPeerNames(void* recvComm, const std::string& host, std::string* subject) {
  TcpComm* comm = asTcpComm(recvComm);
  if (comm->tls == nullptr || !comm->tls->established()) return false;
  net::SockAddr peer{};
  socklen_t len = sizeof(peer);
  std::string ip;
  if (getpeername(comm->fd, &peer.sa, &len) == 0) ip = net::hostString(peer);
  if (subject != nullptr) *subject = comm->tls->peerSubject();
  return comm->tls->peerCertificateNames(host, ip);
}
}  // namespace spccl::transport

extern "C" const spcclNet_v2_t* spcclNetTcp() { return &spccl::transport::kTcpNet; }

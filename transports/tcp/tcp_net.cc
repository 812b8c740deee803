// The spcclNet_v1_t table of the tcp transport. The handle a listener
// publishes is its bound address on the interface chosen by
// SPCCL_SOCKET_IFNAME / SPCCL_SOCKET_FAMILY.
#include "transports/tcp/tcp_net.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/knobs.h"
#include "core/log.h"
#include "transports/tcp/tcp_comm.h"

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
  net::Interface iface;
  int bufferBytes = 0;
  int timeoutMs = 60000;
};
TcpState gTcp;

CommBase* asComm(void* comm) { return static_cast<CommBase*>(comm); }
TcpComm* asTcpComm(void* comm) { return static_cast<TcpComm*>(asComm(comm)); }

spcclResult_t tcpInit(const spcclNetInitArgs_v1_t* args) {
  std::string ifname = args != nullptr && args->socketIfname != nullptr
                           ? args->socketIfname
                           : knobString("SPCCL_SOCKET_IFNAME");
  std::string familyText = knobString("SPCCL_SOCKET_FAMILY");
  int family = net::parseSocketFamily(familyText);
  if (family < 0)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "SPCCL_SOCKET_FAMILY=%s: expected AF_INET or AF_INET6", familyText.c_str());
  TcpState state;
  SPCCL_CHECK(net::pickInterface(ifname, family, &state.iface));
  state.bufferBytes = static_cast<int>(knobInt("SPCCL_SOCKET_BUFFER_BYTES"));
  state.timeoutMs = args != nullptr && args->timeoutMs > 0 ? args->timeoutMs
                                                           : static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  state.initialized = true;
  gTcp = state;
  SPCCL_INFO(kLogNet, "tcp transport on %s %s", gTcp.iface.name.c_str(),
             net::toString(gTcp.iface.addr).c_str());
  return spcclSuccess;
}

spcclResult_t requireInit(const char* op) {
  if (!gTcp.initialized) return SPCCL_FAIL(spcclInvalidUsage, "tcp %s before init", op);
  return spcclSuccess;
}

spcclResult_t tcpListen(void* handle, void** listenComm) {
  SPCCL_CHECK(requireInit("listen"));
  if (handle == nullptr || listenComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp listen: handle and listenComm must not be NULL");
  auto comm = std::make_unique<CommBase>(CommKind::Listen);
  net::SockAddr bound;
  SPCCL_CHECK(net::listenOn(gTcp.iface.addr, 128, &comm->fd, &bound));
  net::setBufferSizes(comm->fd, gTcp.bufferBytes);  // inherited by accepted sockets
  SPCCL_CHECK(net::setNonBlocking(comm->fd, true));
  comm->peerName = net::toString(bound);
  TcpHandle published{kTcpHandleMagic, bound};
  std::memset(handle, 0, SPCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &published, sizeof(published));
  *listenComm = comm.release();
  return spcclSuccess;
}

spcclResult_t tcpConnect(const void* handle, void** sendComm) {
  SPCCL_CHECK(requireInit("connect"));
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
  net::SockAddr peer{};
  socklen_t len = sizeof(peer);
  int fd = accept4(listener->fd, &peer.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return spcclSuccess;
    return SPCCL_FAIL(spcclSystemError, "tcp accept on %s: %s", listener->peerName.c_str(),
                      strerror(errno));
  }
  net::setNoDelay(fd);
  auto comm = std::make_unique<TcpComm>(CommKind::Recv);
  comm->fd = fd;
  comm->connected = true;
  comm->peerName = net::toString(peer);
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
  if (base->kind == CommKind::Send) {
    TcpComm* send = asTcpComm(comm);
    // POLLERR/POLLHUP are always reported, so an idle send comm waits on no events.
    bool wantsToWrite = !send->connected || send->requests.inFlight() > 0;
    *events = wantsToWrite && !send->failure.failed() ? POLLOUT : 0;
  }
  return spcclSuccess;
}

spcclResult_t tcpDescribe(void* comm, char* buf, size_t len) {
  if (comm == nullptr || buf == nullptr || len == 0)
    return SPCCL_FAIL(spcclInvalidArgument, "tcp describe: NULL argument");
  std::snprintf(buf, len, "%s", asComm(comm)->peerName.c_str());
  return spcclSuccess;
}

const spcclNet_v1_t kTcpNet = {
    "tcp",          SPCCL_NET_ABI_VERSION, tcpInit,           tcpListen,
    tcpConnect,     tcpAccept,           regMrNotNeeded,    deregMrNotNeeded,
    tcpIsend,       tcpIrecv,            tcpTest,           tcpPollFd,
    tcpDescribe,    closeComm<TcpComm>,   closeComm<TcpComm>, closeComm<CommBase>};

}  // namespace
}  // namespace spccl::transport

extern "C" const spcclNet_v1_t* spcclNetTcp() { return &spccl::transport::kTcpNet; }

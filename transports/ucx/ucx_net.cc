// The spcclNet_v1_t table of the ucx plugin (libspccl-net-ucx.so), selected
// with SPCCL_TRANSPORT=ucx; UCX itself is configured as usual (UCX_TLS,
// UCX_NET_DEVICES, ...). The listen handle is the address of the side
// channel (see ucx_comm.h) on the SPCCL_SOCKET_IFNAME interface.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "base/check.h"
#include "base/knobs.h"
#include "base/log.h"
#include "transports/common/pending_accept.h"
#include "transports/ucx/ucx_comm.h"
#include "transports/ucx/ucx_worker.h"

namespace spccl::ucx {
namespace {

constexpr uint32_t kUcxHandleMagic = 0x53505543;  // "SPUC"

struct UcxHandle {
  uint32_t magic;
  net::SockAddr addr;
};
static_assert(sizeof(UcxHandle) <= SPCCL_NET_HANDLE_MAXSIZE);

net::Interface gInterface;
std::mutex gInitMutex;

UcxComm* asComm(void* comm) { return static_cast<UcxComm*>(comm); }

// The worker of the comm at hand, then (every kSweepMs) the worker, setup
// and liveness of every comm, so that a peer's EOF is seen and sends move
// on comms the engine does not wait on.
void progressAll(UcxComm* current) {
  current->worker.progress();
  for (void* comm : commsDueForSweep()) {
    auto* c = static_cast<UcxComm*>(comm);
    c->worker.progress();
    c->progress();
  }
}

spcclResult_t ucxInit(const spcclNetInitArgs_v1_t* args) {
  std::lock_guard<std::mutex> lock(gInitMutex);
  if (process() != nullptr) return spcclSuccess;
  std::string ifname = args != nullptr && args->socketIfname != nullptr
                           ? args->socketIfname
                           : knobString("SPCCL_SOCKET_IFNAME");
  int family = net::parseSocketFamily(knobString("SPCCL_SOCKET_FAMILY"));
  if (family < 0) family = AF_UNSPEC;
  SPCCL_CHECK(net::pickInterface(ifname, family, &gInterface));
  int timeoutMs = args != nullptr && args->timeoutMs > 0
                      ? args->timeoutMs
                      : static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  SPCCL_CHECK(processInit(timeoutMs));
  SPCCL_INFO(kLogNet, "ucx transport: side channels on %s %s", gInterface.name.c_str(),
             net::toString(gInterface.addr).c_str());
  return spcclSuccess;
}

spcclResult_t requireInit(const char* op) {
  if (process() == nullptr) return SPCCL_FAIL(spcclInvalidUsage, "ucx %s before init", op);
  return spcclSuccess;
}

spcclResult_t ucxListen(void* handle, void** listenComm) {
  SPCCL_CHECK(requireInit("listen"));
  if (handle == nullptr || listenComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx listen: handle and listenComm must not be NULL");
  std::lock_guard<std::mutex> lock(process()->mutex);
  auto* comm = new UcxComm(CommKind::Listen);
  net::SockAddr bound;
  spcclResult_t res = net::listenOn(gInterface.addr, 128, &comm->listenFd, &bound);
  if (res == spcclSuccess) res = net::setNonBlocking(comm->listenFd, true);
  if (res != spcclSuccess) {
    if (comm->listenFd >= 0) close(comm->listenFd);
    delete comm;
    return res;
  }
  comm->peerName = net::toString(bound);
  UcxHandle published{kUcxHandleMagic, bound};
  std::memset(handle, 0, SPCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &published, sizeof(published));
  *listenComm = comm;
  return spcclSuccess;
}

spcclResult_t ucxConnect(const void* handle, void** sendComm) {
  SPCCL_CHECK(requireInit("connect"));
  if (handle == nullptr || sendComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx connect: handle and sendComm must not be NULL");
  UcxHandle peer;
  std::memcpy(&peer, handle, sizeof(peer));
  if (peer.magic != kUcxHandleMagic)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx connect: the handle is not a ucx handle");
  std::lock_guard<std::mutex> lock(process()->mutex);
  *sendComm = connectingComm(peer.addr);  // a failure stays in the comm, reported by test
  return spcclSuccess;
}

spcclResult_t ucxAccept(void* listenComm, void** recvComm) {
  if (listenComm == nullptr || recvComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx accept: listenComm and recvComm must not be NULL");
  std::lock_guard<std::mutex> lock(process()->mutex);
  UcxComm* listener = asComm(listenComm);
  *recvComm = nullptr;
  net::SockAddr peer;
  int fd = -1;
  SPCCL_CHECK(transport::acceptPending(listener->listenFd, "ucx", listener->peerName, &peer, &fd));
  if (fd < 0) return spcclSuccess;  // none pending yet
  *recvComm = acceptedComm(fd, peer);
  return spcclSuccess;
}

// UCX registers (and caches) memory itself where its transports need it.
spcclResult_t ucxRegMr(void*, void*, size_t, void** mhandle) {
  if (mhandle != nullptr) *mhandle = nullptr;
  return spcclSuccess;
}
spcclResult_t ucxDeregMr(void*, void*) { return spcclSuccess; }

spcclResult_t postOn(void* comm, bool isSend, void* data, size_t size, void** request) {
  const char* op = isSend ? "ucx isend" : "ucx irecv";
  if (comm == nullptr || request == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: NULL comm, request or data", op);
  std::lock_guard<std::mutex> lock(process()->mutex);
  UcxComm* c = asComm(comm);
  c->progress();
  UcxRequest* posted = nullptr;
  SPCCL_CHECK(c->post(isSend, data, size, &posted));
  *request = posted;
  return spcclSuccess;
}

spcclResult_t ucxIsend(void* sendComm, const void* data, size_t size, void*, void** request) {
  return postOn(sendComm, true, const_cast<void*>(data), size, request);
}

spcclResult_t ucxIrecv(void* recvComm, void* data, size_t capacity, void*, void** request) {
  return postOn(recvComm, false, data, capacity, request);
}

spcclResult_t ucxTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx test: NULL request or done");
  std::lock_guard<std::mutex> lock(process()->mutex);
  auto* r = static_cast<UcxRequest*>(request);
  progressAll(r->comm);
  return r->comm->test(r, done, size);
}

spcclResult_t ucxPollFd(void* comm, int* fd, short* events) {
  if (comm == nullptr || fd == nullptr || events == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx pollFd: NULL argument");
  std::lock_guard<std::mutex> lock(process()->mutex);
  UcxComm* c = asComm(comm);
  *events = POLLIN;
  if (c->kind == CommKind::Listen) {
    *fd = c->listenFd;
    return spcclSuccess;
  }
  uint64_t seen = process()->completions;  // the engine has looked at everything before this
  progressAll(c);
  if (c->failed()) {  // its worker is gone: wake the engine at once, test reports it
    *fd = c->failureWakeFd();
    return spcclSuccess;
  }
  if (c->phase == UcxComm::Phase::Setup) {  // the side channel makes progress
    *fd = c->side.fd();
    *events = c->side.pollEvents();
    return spcclSuccess;
  }
  progressSignalled();
  armAll(seen);
  *fd = process()->epollFd;
  return spcclSuccess;
}

spcclResult_t ucxDescribe(void* comm, char* buf, size_t len) {
  if (comm == nullptr || buf == nullptr || len == 0)
    return SPCCL_FAIL(spcclInvalidArgument, "ucx describe: NULL argument");
  std::snprintf(buf, len, "%s", asComm(comm)->peerName.c_str());
  return spcclSuccess;
}

spcclResult_t ucxClose(void* comm) {
  if (comm == nullptr) return spcclSuccess;
  std::lock_guard<std::mutex> lock(process()->mutex);
  UcxComm* c = asComm(comm);
  if (c->kind == CommKind::Listen) {
    close(c->listenFd);
    delete c;
    return spcclSuccess;
  }
  c->shutdown();  // UCX holds nothing of it after this
  delete c;
  return spcclSuccess;
}

}  // namespace
}  // namespace spccl::ucx

// The symbol the registry looks up (SPCCL_NET_PLUGIN_SYMBOL_V1): this plugin
// is a version-1 table, run by the registry as a transport with one device.
extern "C" __attribute__((visibility("default")))
const spcclNet_v1_t spcclNetPlugin_v1 = {"ucx",
                                         1,
                                         spccl::ucx::ucxInit,
                                         spccl::ucx::ucxListen,
                                         spccl::ucx::ucxConnect,
                                         spccl::ucx::ucxAccept,
                                         spccl::ucx::ucxRegMr,
                                         spccl::ucx::ucxDeregMr,
                                         spccl::ucx::ucxIsend,
                                         spccl::ucx::ucxIrecv,
                                         spccl::ucx::ucxTest,
                                         spccl::ucx::ucxPollFd,
                                         spccl::ucx::ucxDescribe,
                                         spccl::ucx::ucxClose,
                                         spccl::ucx::ucxClose,
                                         spccl::ucx::ucxClose};

// Error text for the registry (src/core/transport_registry_error_text.h):
// the messages of this plugin's failures, per thread.
extern "C" __attribute__((visibility("default"))) const char* spcclNetPluginLastError_v1() {
  return spccl::threadLastErrorText();
}

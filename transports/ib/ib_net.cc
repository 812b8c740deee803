// The spcclNet_v1_t table of the ib plugin (libspccl-net-ib.so), selected
// with SPCCL_TRANSPORT=ib. Without an RDMA device with an active port, init
// says so at INFO and fails; the registry then falls back to tcp. Knobs:
// SPCCL_IB_HCA, SPCCL_IB_GID_INDEX, SPCCL_IB_MR_CACHE (src/core/knobs.cc).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "core/check.h"
#include "core/clock.h"
#include "core/knobs.h"
#include "core/log.h"
#include "transports/ib/ib_comm.h"
#ifdef SPCCL_IB_WITH_TOPOLOGY
#include "topology/nic_choice.h"
#endif

namespace spccl::ib {
namespace {

constexpr uint32_t kIbHandleMagic = 0x53504948;  // "SPIH"

struct IbHandle {
  uint32_t magic;
  net::SockAddr addr;  // the listener's side channel
};
static_assert(sizeof(IbHandle) <= SPCCL_NET_HANDLE_MAXSIZE);

struct IbState {
  std::mutex mutex;
  bool ready = false;
  IbDevice device;
  std::unique_ptr<MrCache> cache;
  net::Interface iface;
  int timeoutMs = 60000;
};
IbState gIb;

IbComm* asComm(void* comm) { return static_cast<IbComm*>(comm); }

spcclResult_t makeCache() {
  ibv_pd* pd = gIb.device.pd;
  auto reg = [pd](void* base, size_t length, Registration* out) {
    auto* mr = ibv_reg_mr(pd, base, length,
                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (mr == nullptr)
      return SPCCL_FAIL(spcclSystemError, "ib: ibv_reg_mr of %zu bytes at %p failed: %s", length,
                        base, strerror(errno));
    out->mr = mr;
    out->lkey = mr->lkey;
    out->rkey = mr->rkey;
    return spcclSuccess;
  };
  auto dereg = [](Registration& r) { ibv_dereg_mr(static_cast<ibv_mr*>(r.mr)); };
  int64_t entries = knobInt("SPCCL_IB_MR_CACHE");
  gIb.cache = std::make_unique<MrCache>(reg, dereg, entries > 0 ? static_cast<size_t>(entries) : 0,
                                        static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  return spcclSuccess;
}

// The port whose device is closest to this rank (src/topology), else the
// first one SPCCL_IB_HCA selects.
const IbPort& choosePort(const std::vector<IbPort>& ports) {
#ifdef SPCCL_IB_WITH_TOPOLOGY
  topo::Topology topology;
  if (topo::discoverTopology(knobString("SPCCL_TOPO_XML"), &topology) != spcclSuccess)
    return ports.front();
  topo::NicRequest request;
  request.localRank = static_cast<int>(knobInt("SPCCL_LOCAL_RANK"));
  request.numaNode = topo::currentNumaNode(topology);
  request.rails = static_cast<int>(knobInt("SPCCL_TOPO_RAILS"));
  request.override = knobString("SPCCL_TOPO_NIC");
  for (const IbPort& p : ports) request.candidates.push_back(p.device);
  topo::NicChoice choice = topo::chooseNics(topology, request);
  SPCCL_INFO(kLogNet, "ib: NIC choice: %s", choice.why.c_str());
  if (!choice.nics.empty()) {
    const topo::PciDevice& nic = topology.nics[static_cast<size_t>(choice.nics.front())];
    for (const IbPort& p : ports)
      if (nic.hasName(p.device)) return p;
  }
#endif
  return ports.front();
}

spcclResult_t ibInit(const spcclNetInitArgs_v1_t* args) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  if (gIb.ready) return spcclSuccess;
  std::string hca = knobString("SPCCL_IB_HCA");
  std::vector<IbPort> ports;
  std::string why;
  SPCCL_CHECK(listActivePorts(parseHcaSpec(hca), static_cast<int>(knobInt("SPCCL_IB_GID_INDEX")),
                              &ports, &why));
  if (ports.empty()) {
    SPCCL_INFO(kLogNet, "ib: %s%s%s; the ib transport is unavailable", why.c_str(),
               hca.empty() ? "" : ", SPCCL_IB_HCA=", hca.c_str());
    return spcclSystemError;
  }
  SPCCL_CHECK(openDevice(choosePort(ports), &gIb.device));
  std::string ifname = args != nullptr && args->socketIfname != nullptr ? args->socketIfname : "";
  SPCCL_CHECK(net::pickInterface(ifname, AF_UNSPEC, &gIb.iface));
  gIb.timeoutMs = args != nullptr && args->timeoutMs > 0 ? args->timeoutMs : 60000;
  SPCCL_CHECK(makeCache());
  gIb.ready = true;
  return spcclSuccess;
}

spcclResult_t ibListen(void* handle, void** listenComm) {
  if (!gIb.ready) return SPCCL_FAIL(spcclInvalidUsage, "ib listen before init");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  auto comm = std::make_unique<IbComm>(CommKind::Listen, &gIb.device, gIb.cache.get());
  net::SockAddr bound;
  SPCCL_CHECK(net::listenOn(gIb.iface.addr, 128, &comm->listenFd, &bound));
  SPCCL_CHECK(net::setNonBlocking(comm->listenFd, true));
  comm->peerName = net::toString(bound);
  IbHandle published{kIbHandleMagic, bound};
  std::memset(handle, 0, SPCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &published, sizeof(published));
  *listenComm = comm.release();
  return spcclSuccess;
}

spcclResult_t ibConnect(const void* handle, void** sendComm) {
  if (!gIb.ready) return SPCCL_FAIL(spcclInvalidUsage, "ib connect before init");
  IbHandle peer;
  std::memcpy(&peer, handle, sizeof(peer));
  if (peer.magic != kIbHandleMagic)
    return SPCCL_FAIL(spcclInvalidArgument, "ib connect: the handle is not an ib handle");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  auto comm = std::make_unique<IbComm>(CommKind::Send, &gIb.device, gIb.cache.get());
  spcclResult_t res = comm->side.connect(peer.addr, monotonicMs() + gIb.timeoutMs);
  comm->peerName = comm->side.peerName();
  if (res == spcclSuccess) res = comm->create();
  if (res != spcclSuccess) comm->fail(res);  // reported by isend/test, as tcp does
  *sendComm = comm.release();
  return spcclSuccess;
}

spcclResult_t ibAccept(void* listenComm, void** recvComm) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbComm* listener = asComm(listenComm);
  *recvComm = nullptr;
  net::SockAddr peer{};
  socklen_t len = sizeof(peer);
  int fd = accept4(listener->listenFd, &peer.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return spcclSuccess;
    return SPCCL_FAIL(spcclSystemError, "ib accept on %s: %s", listener->peerName.c_str(),
                      strerror(errno));
  }
  auto comm = std::make_unique<IbComm>(CommKind::Recv, &gIb.device, gIb.cache.get());
  comm->side.adopt(fd, peer, monotonicMs() + gIb.timeoutMs);
  comm->peerName = comm->side.peerName();
  spcclResult_t res = comm->create();
  if (res != spcclSuccess) comm->fail(res);
  *recvComm = comm.release();
  return spcclSuccess;
}

// Explicit registration for callers that reuse buffers; isend/irecv
// register through the cache anyway.
spcclResult_t ibRegMr(void*, void* data, size_t size, void** mhandle) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  Registration* r = nullptr;
  SPCCL_CHECK(gIb.cache->acquire(data, size, &r));
  *mhandle = r;
  return spcclSuccess;
}

spcclResult_t ibDeregMr(void*, void* mhandle) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  gIb.cache->release(static_cast<Registration*>(mhandle));
  return spcclSuccess;
}

spcclResult_t postOn(void* comm, bool isSend, void* data, size_t size, void** request) {
  if (comm == nullptr || request == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "ib %s: NULL comm, request or data",
                      isSend ? "isend" : "irecv");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbRequest* r = nullptr;
  SPCCL_CHECK(asComm(comm)->post(isSend, data, size, &r));
  *request = r;
  return spcclSuccess;
}

spcclResult_t ibIsend(void* sendComm, const void* data, size_t size, void*, void** request) {
  return postOn(sendComm, true, const_cast<void*>(data), size, request);
}

spcclResult_t ibIrecv(void* recvComm, void* data, size_t capacity, void*, void** request) {
  return postOn(recvComm, false, data, capacity, request);
}

spcclResult_t ibTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ib test: NULL request or done");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  auto* r = static_cast<IbRequest*>(request);
  return r->comm->test(r, done, size);
}

spcclResult_t ibPollFd(void* comm, int* fd, short* events) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbComm* c = asComm(comm);
  *events = POLLIN;
  if (c->kind == CommKind::Listen) {
    *fd = c->listenFd;
  } else if (!c->ready && !c->failed()) {
    *fd = c->side.fd();
    *events = c->side.pollEvents();
  } else {
    *fd = c->armForSleep() ? c->channel->fd : -1;  // -1: come back soon
  }
  return spcclSuccess;
}

spcclResult_t ibDescribe(void* comm, char* buf, size_t len) {
  std::snprintf(buf, len, "%s", asComm(comm)->peerName.c_str());
  return spcclSuccess;
}

spcclResult_t ibClose(void* comm) {
  if (comm == nullptr) return spcclSuccess;
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbComm* c = asComm(comm);
  if (c->listenFd >= 0) close(c->listenFd);
  delete c;
  return spcclSuccess;
}

}  // namespace
}  // namespace spccl::ib

// The symbol the registry looks up (SPCCL_NET_PLUGIN_SYMBOL_V1): this plugin
// is a version-1 table, run by the registry as a transport with one device.
extern "C" __attribute__((visibility("default"))) const spcclNet_v1_t spcclNetPlugin_v1 = {
    "ib",
    1,
    spccl::ib::ibInit,
    spccl::ib::ibListen,
    spccl::ib::ibConnect,
    spccl::ib::ibAccept,
    spccl::ib::ibRegMr,
    spccl::ib::ibDeregMr,
    spccl::ib::ibIsend,
    spccl::ib::ibIrecv,
    spccl::ib::ibTest,
    spccl::ib::ibPollFd,
    spccl::ib::ibDescribe,
    spccl::ib::ibClose,
    spccl::ib::ibClose,
    spccl::ib::ibClose};

// Error text for the registry (src/core/transport_registry_error_text.h):
// the messages of this plugin's failures, per thread.
extern "C" __attribute__((visibility("default"))) const char* spcclNetPluginLastError_v1() {
  return spccl::threadLastError().c_str();
}

// The spcclNet_v2_t table of the ib plugin (libspccl-net-ib.so), selected
// with SPCCL_TRANSPORT=ib. Its devices are ports (ib_device_list.h): the
// active ports SPCCL_IB_HCA selects, closest first, as many as
// SPCCL_TOPO_RAILS asks. Without an RDMA device with an active port, init
// says so at INFO and fails with that reason as its error text, which the
// registry makes the error of communicator creation. GPU
// memory: regMr of SPCCL_PTR_CUDA where a peer-memory module is loaded,
// regMrDmaBuf where the HCA accepts dma-bufs (ib_gdr_support.h). Knobs:
// SPCCL_IB_HCA, SPCCL_IB_GID_INDEX, SPCCL_IB_MR_CACHE, SPCCL_IB_GDR,
// SPCCL_TOPO_RAILS (src/base/knobs.cc).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "base/check.h"
#include "base/clock.h"
#include "base/knobs.h"
#include "base/log.h"
#include "transports/common/pending_accept.h"
#include "transports/ib/ib_comm.h"
#include "transports/ib/ib_device_list.h"
#include "transports/ib/ib_dmabuf.h"
#include "transports/ib/ib_gdr_support.h"
#include "transports/ib/ib_topology_ranking.h"

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
  std::vector<IbDevice> devices;  // spcclNet_v2_t's devs, closest first; fixed after init
  net::Interface iface;
  int timeoutMs = 60000;
};
// Never destroyed: comms the engine did not close before exit still point
// at their device, and the kernel releases verbs resources with the process.
IbState& gIb = *new IbState;

IbComm* asComm(void* comm) { return static_cast<IbComm*>(comm); }

void logDevice(int dev, const ChosenDevice& chosen, const GdrSupport& gdr) {
  const IbPort& p = chosen.port;
  SPCCL_INFO(kLogNet, "ib: device %d: %s (%s, MTU %d, LID %u, GID index %d, %d Mbps) %s: %s", dev,
             portName(p).c_str(), p.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
             128 << p.mtu, p.lid, p.gidIndex, p.speedMbps,
             p.pciPath.empty() ? "(no PCI path)" : p.pciPath.c_str(), chosen.reason.c_str());
  SPCCL_INFO(kLogNet, "ib: device %d: %s registers %s memory: %s", dev, portName(p).c_str(),
             ptrSupportNames(gdr.ptrSupport).c_str(), gdr.reason.c_str());
}

spcclResult_t ibInit(const spcclNetInitArgs_v2_t* args) {
  std::lock_guard<std::mutex> lock(gIb.mutex);
  if (gIb.ready) return spcclSuccess;
  std::string hca = knobString("SPCCL_IB_HCA");
  std::vector<IbPort> ports;
  std::string seen;
  SPCCL_CHECK(listActivePorts(static_cast<int>(knobInt("SPCCL_IB_GID_INDEX")), &ports, &seen));
  std::vector<ChosenDevice> chosen = chooseDevices(
      ports, parseHcaSpec(hca), static_cast<int>(knobInt("SPCCL_TOPO_RAILS")), topologyRanking());
  if (chosen.empty()) {
    std::string why = seen.empty() ? "no RDMA device found (ibv_get_device_list listed none)"
                                   : "no active port selected by SPCCL_IB_HCA among: " + seen;
    why = "ib: " + why + (hca.empty() ? "" : ", SPCCL_IB_HCA=" + hca);
    SPCCL_INFO(kLogNet, "%s; the ib transport is unavailable", why.c_str());
    // The registry makes it the error of communicator creation.
    setThreadLastError(why);
    return spcclSystemError;
  }
  std::vector<IbPort> chosenPorts;
  chosenPorts.reserve(chosen.size());
  for (const ChosenDevice& c : chosen) chosenPorts.push_back(c.port);
  int64_t entries = knobInt("SPCCL_IB_MR_CACHE");
  SPCCL_CHECK(openDevices(chosenPorts, entries > 0 ? static_cast<size_t>(entries) : 0,
                          knobInt("SPCCL_IB_GDR"), &gIb.devices));
  for (size_t dev = 0; dev < chosen.size(); ++dev)
    logDevice(static_cast<int>(dev), chosen[dev], gIb.devices[dev].hca->gdr);
  std::string ifname = args != nullptr && args->socketIfname != nullptr ? args->socketIfname : "";
  SPCCL_CHECK(net::pickInterface(ifname, AF_UNSPEC, &gIb.iface));
  gIb.timeoutMs = args != nullptr && args->timeoutMs > 0 ? args->timeoutMs : 60000;
  gIb.ready = true;
  return spcclSuccess;
}

int deviceCount() { return gIb.ready ? static_cast<int>(gIb.devices.size()) : 0; }

spcclResult_t ibDevices(int* ndev) {
  if (ndev == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "ib devices: ndev is NULL");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  *ndev = deviceCount();
  return spcclSuccess;
}

spcclResult_t ibGetProperties(int dev, spcclNetProperties_v2_t* props) {
  if (props == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "ib getProperties: props is NULL");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  SPCCL_CHECK(checkDeviceIndex("getProperties", dev, deviceCount()));
  const IbDevice& device = gIb.devices[static_cast<size_t>(dev)];
  const IbPort& port = device.port;
  std::memset(props, 0, sizeof(*props));
  std::snprintf(props->name, sizeof(props->name), "%s", portName(port).c_str());
  std::snprintf(props->pciPath, sizeof(props->pciPath), "%s", port.pciPath.c_str());
  props->speedMbps = port.speedMbps;
  props->ptrSupport = device.hca->gdr.ptrSupport;
  return spcclSuccess;
}

spcclResult_t ibListen(int dev, void* handle, void** listenComm) {
  if (handle == nullptr || listenComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ib listen: NULL handle or listenComm");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  SPCCL_CHECK(checkDeviceIndex("listen", dev, deviceCount()));
  auto comm = std::make_unique<IbComm>(CommKind::Listen, &gIb.devices[static_cast<size_t>(dev)]);
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

spcclResult_t ibConnect(int dev, const void* handle, void** sendComm) {
  if (handle == nullptr || sendComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ib connect: NULL handle or sendComm");
  IbHandle peer;
  std::memcpy(&peer, handle, sizeof(peer));
  if (peer.magic != kIbHandleMagic)
    return SPCCL_FAIL(spcclInvalidArgument, "ib connect: the handle is not an ib handle");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  SPCCL_CHECK(checkDeviceIndex("connect", dev, deviceCount()));
  auto comm = std::make_unique<IbComm>(CommKind::Send, &gIb.devices[static_cast<size_t>(dev)]);
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
  net::SockAddr peer;
  int fd = -1;
  SPCCL_CHECK(transport::acceptPending(listener->listenFd, "ib", listener->peerName, &peer, &fd));
  if (fd < 0) return spcclSuccess;  // none pending yet
  auto comm = std::make_unique<IbComm>(CommKind::Recv, listener->device);
  comm->side.adopt(fd, peer, monotonicMs() + gIb.timeoutMs);
  comm->peerName = comm->side.peerName();
  spcclResult_t res = comm->create();
  if (res != spcclSuccess) comm->fail(res);
  *recvComm = comm.release();
  return spcclSuccess;
}

// Explicit registration for callers that reuse buffers (isend/irecv use
// the handle; without one they register host memory through the cache).
// The comm names the device, whose HCA's PD and cache the registration
// belongs to. GPU memory (peer memory: ibv_reg_mr pins it like host
// memory) shares the cache, widened to GPU pages (registrationPageBytes).
spcclResult_t ibRegMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == nullptr || mhandle == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "ib regMr: NULL comm, mhandle or data");
  SPCCL_CHECK(checkTypeAccepted("regMr", type, SPCCL_PTR_HOST | SPCCL_PTR_CUDA));
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbComm* c = asComm(comm);
  SPCCL_CHECK(
      checkDeviceSupports("regMr", type, type, portName(c->device->port), c->device->hca->gdr));
  Registration* r = nullptr;
  SPCCL_CHECK(c->cache->acquire(data, size, registrationPageBytes(type, c->cache->pageSize()), &r));
  *mhandle = r;
  return spcclSuccess;
}

// GPU memory exported as a dma-buf (ib_dmabuf.h). In the table whatever
// the devices support (the table is static); a device without
// SPCCL_PTR_DMABUF refuses by name. type: the memory's kind, as NCCL's
// callers pass it (NCCL_PTR_CUDA), or SPCCL_PTR_DMABUF.
spcclResult_t ibRegMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                            void** mhandle) {
  if (comm == nullptr || mhandle == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "ib regMrDmaBuf: NULL comm or mhandle");
  if (fd < 0 || data == nullptr || size == 0)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "ib regMrDmaBuf: needs a dma-buf fd, the buffer's address and its size "
                      "(got fd %d, data %p, size %zu)",
                      fd, data, size);
  SPCCL_CHECK(checkTypeAccepted("regMrDmaBuf", type, SPCCL_PTR_CUDA | SPCCL_PTR_DMABUF));
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbDevice* device = asComm(comm)->device;
  std::string name = portName(device->port);
  SPCCL_CHECK(checkDeviceSupports("regMrDmaBuf", type, SPCCL_PTR_DMABUF, name, device->hca->gdr));
  std::unique_ptr<Registration> r;
  SPCCL_CHECK(registerDmaBuf(device->hca->pd, kMrAccess, name, data, size, offset, fd, &r));
  *mhandle = r.release();  // owned by the handle until deregMr
  return spcclSuccess;
}

spcclResult_t ibDeregMr(void* comm, void* mhandle) {
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "ib deregMr: NULL comm");
  if (mhandle == nullptr) return spcclSuccess;
  std::lock_guard<std::mutex> lock(gIb.mutex);
  auto* r = static_cast<Registration*>(mhandle);
  if (r->dmaBuf)
    deregisterDmaBuf(std::unique_ptr<Registration>(r));
  else
    asComm(comm)->cache->release(r);
  return spcclSuccess;
}

spcclResult_t postOn(void* comm, bool isSend, void* data, size_t size, void* mhandle,
                     void** request) {
  if (comm == nullptr || request == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "ib %s: NULL comm, request or data",
                      isSend ? "isend" : "irecv");
  std::lock_guard<std::mutex> lock(gIb.mutex);
  IbRequest* r = nullptr;
  SPCCL_CHECK(asComm(comm)->post(isSend, data, size, static_cast<Registration*>(mhandle), &r));
  *request = r;
  return spcclSuccess;
}

spcclResult_t ibIsend(void* sendComm, const void* data, size_t size, void* mhandle,
                      void** request) {
  return postOn(sendComm, true, const_cast<void*>(data), size, mhandle, request);
}

spcclResult_t ibIrecv(void* recvComm, void* data, size_t capacity, void* mhandle, void** request) {
  return postOn(recvComm, false, data, capacity, mhandle, request);
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

// The symbol the registry looks up (SPCCL_NET_PLUGIN_SYMBOL).
extern "C" __attribute__((visibility("default")))
const spcclNet_v2_t spcclNetPlugin_v2 = {"ib",
                                         SPCCL_NET_ABI_VERSION,
                                         spccl::ib::ibInit,
                                         spccl::ib::ibDevices,
                                         spccl::ib::ibGetProperties,
                                         spccl::ib::ibListen,
                                         spccl::ib::ibConnect,
                                         spccl::ib::ibAccept,
                                         spccl::ib::ibRegMr,
                                         spccl::ib::ibRegMrDmaBuf,
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
  return spccl::threadLastErrorText();
}

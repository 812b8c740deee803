// The spcclNet_v2_t table of the shm transport (one device: this host). A listener binds an
// abstract AF_UNIX name (per network namespace, removed by the kernel with
// the socket); the handle carries that name and the listener's pid.
#include "transports/shm/shm_net.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/clock.h"
#include "base/knobs.h"
#include "base/log.h"
#include "transports/shm/shm_comm.h"
#include "transports/shm/shm_device.h"

namespace spccl::transport {
namespace {

constexpr uint32_t kShmHandleMagic = 0x5350534c;  // "SPSL"

struct ShmHandle {
  uint32_t magic;
  int32_t pid;
  char name[sizeof(sockaddr_un::sun_path) - 1];  // abstract name, without the leading NUL
};
static_assert(sizeof(ShmHandle) <= SPCCL_NET_HANDLE_MAXSIZE);

struct ShmState {
  bool initialized = false;
  size_t inlineBytes = 8192;
  int timeoutMs = 60000;
};
ShmState gShm;
std::atomic<uint64_t> gListenCounter{0};

CommBase* asComm(void* comm) { return static_cast<CommBase*>(comm); }
ShmComm* asShmComm(void* comm) { return static_cast<ShmComm*>(asComm(comm)); }

socklen_t abstractAddress(const char* name, sockaddr_un* addr) {
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  size_t length = strnlen(name, sizeof(addr->sun_path) - 1);
  std::memcpy(addr->sun_path + 1, name, length);  // sun_path[0] == 0: abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
}

spcclResult_t shmInit(const spcclNetInitArgs_v2_t* args) {
  // Under Yama ptrace_scope=1 only descendants may be read; the receiver is
  // not ours, so allow any process (of the same user) to read us. Without
  // Yama the call fails harmlessly.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  int64_t inlineBytes = knobInt("SPCCL_SHM_INLINE_BYTES");
  gShm.inlineBytes = inlineBytes > 0 ? static_cast<size_t>(inlineBytes) : 0;
  gShm.timeoutMs = args != nullptr && args->timeoutMs > 0
                       ? args->timeoutMs
                       : static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  gShm.initialized = true;
  return spcclSuccess;
}

spcclResult_t requireInit(const char* op) {
  if (!gShm.initialized) return SPCCL_FAIL(spcclInvalidUsage, "shm %s before init", op);
  return spcclSuccess;
}

spcclResult_t shmDevices(int* ndev) {
  if (ndev == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "shm devices: ndev is NULL");
  *ndev = 1;
  return spcclSuccess;
}

spcclResult_t checkDevice(const char* op, int dev) {
  if (dev != 0)
    return SPCCL_FAIL(spcclInvalidArgument, "shm %s: dev %d does not exist (shm has device 0)", op,
                      dev);
  return spcclSuccess;
}

spcclResult_t shmGetProperties(int dev, spcclNetProperties_v2_t* props) {
  SPCCL_CHECK(checkDevice("getProperties", dev));
  if (props == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "shm getProperties: props is NULL");
  *props = spcclNetProperties_v2_t{};
  std::snprintf(props->name, sizeof(props->name), "shm");
  props->ptrSupport = SPCCL_PTR_HOST;
  return spcclSuccess;
}

spcclResult_t shmListen(int dev, void* handle, void** listenComm) {
  SPCCL_CHECK(checkDevice("listen", dev));
  SPCCL_CHECK(requireInit("listen"));
  if (handle == nullptr || listenComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "shm listen: handle and listenComm must not be NULL");
  ShmHandle published{};
  published.magic = kShmHandleMagic;
  published.pid = static_cast<int32_t>(getpid());
  // pid + counter are unique among live processes of this namespace; the
  // random part keeps a recycled pid from meeting a stale peer's handle.
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != sizeof(nonce))
    nonce = static_cast<uint64_t>(monotonicMs()) * 0x9E3779B97F4A7C15ull;
  std::snprintf(published.name, sizeof(published.name), "spccl-shm-%d-%llu-%016llx", published.pid,
                static_cast<unsigned long long>(gListenCounter++),
                static_cast<unsigned long long>(nonce));
  auto comm = std::make_unique<CommBase>(CommKind::Listen);
  comm->peerName = std::string("@") + published.name;
  comm->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (comm->fd < 0) return SPCCL_FAIL(spcclSystemError, "shm listen socket: %s", strerror(errno));
  sockaddr_un addr;
  socklen_t len = abstractAddress(published.name, &addr);
  if (bind(comm->fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(comm->fd, 128) != 0) {
    int err = errno;
    close(comm->fd);
    return SPCCL_FAIL(spcclSystemError, "shm listen on %s: %s", comm->peerName.c_str(),
                      strerror(err));
  }
  std::memset(handle, 0, SPCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &published, sizeof(published));
  *listenComm = comm.release();
  return spcclSuccess;
}

spcclResult_t shmConnect(int dev, const void* handle, void** sendComm) {
  SPCCL_CHECK(checkDevice("connect", dev));
  SPCCL_CHECK(requireInit("connect"));
  if (handle == nullptr || sendComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "shm connect: handle and sendComm must not be NULL");
  ShmHandle peer;
  std::memcpy(&peer, handle, sizeof(peer));
  if (peer.magic != kShmHandleMagic)
    return SPCCL_FAIL(spcclInvalidArgument, "shm connect: the handle is not an shm handle");
  peer.name[sizeof(peer.name) - 1] = '\0';
  auto comm = std::make_unique<ShmComm>(CommKind::Send);
  comm->peerName = "pid " + std::to_string(peer.pid) + " @" + peer.name;
  comm->peerPid = peer.pid;
  comm->remoteLen = abstractAddress(peer.name, &comm->remote);
  comm->inlineBytes = gShm.inlineBytes;
  comm->connectDeadlineMs = monotonicMs() + gShm.timeoutMs;
  comm->startConnect();  // a failure is kept in the comm and reported by isend/test
  *sendComm = static_cast<CommBase*>(comm.release());
  return spcclSuccess;
}

spcclResult_t shmAccept(void* listenComm, void** recvComm) {
  if (listenComm == nullptr || recvComm == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "shm accept: listenComm and recvComm must not be NULL");
  CommBase* listener = asComm(listenComm);
  *recvComm = nullptr;
  int fd = accept4(listener->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return spcclSuccess;
    return SPCCL_FAIL(spcclSystemError, "shm accept on %s: %s", listener->peerName.c_str(),
                      strerror(errno));
  }
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    int err = errno;
    close(fd);
    return SPCCL_FAIL(spcclSystemError, "shm accept on %s: SO_PEERCRED: %s",
                      listener->peerName.c_str(), strerror(err));
  }
  auto comm = std::make_unique<ShmComm>(CommKind::Recv);
  comm->fd = fd;
  comm->connected = true;
  comm->peerPid = cred.pid;
  comm->peerName = "pid " + std::to_string(cred.pid);
  *recvComm = static_cast<CommBase*>(comm.release());
  return spcclSuccess;
}

spcclResult_t shmIsend(void* sendComm, const void* data, size_t size, void*, void** request) {
  if (sendComm == nullptr || request == nullptr || (data == nullptr && size > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "shm isend: NULL comm, request or data");
  ShmComm* comm = asShmComm(sendComm);
  // cuda_ipc: device memory goes as a handle the receiver opens.
  shm::DeviceDescriptor device{};
  const bool onDevice = comm->deviceIpc && size > 0 && isDeviceMemory(data);
  if (onDevice) SPCCL_CHECK(describeDevicePayload(data, size, comm->peerName, &device));
  ShmRequest* posted = nullptr;
  SPCCL_CHECK(postRequest(comm, "shm isend", &posted));
  posted->data = static_cast<char*>(const_cast<void*>(data));
  posted->size = size;
  posted->stage = ShmStage::WriteHeader;
  if (onDevice)
    encodeSendHeader(*posted, shm::Mode::Device, &device);
  else
    encodeSendHeader(*posted, size > comm->inlineBytes && !comm->remoteReadsRefused
                                  ? shm::Mode::Remote
                                  : shm::Mode::Inline);
  comm->progress();  // start at once when the socket has room; failures stay in the comm
  *request = posted;
  return spcclSuccess;
}

spcclResult_t shmIrecv(void* recvComm, void* data, size_t capacity, void*, void** request) {
  if (recvComm == nullptr || request == nullptr || (data == nullptr && capacity > 0))
    return SPCCL_FAIL(spcclInvalidArgument, "shm irecv: NULL comm, request or data");
  ShmComm* comm = asShmComm(recvComm);
  ShmRequest* posted = nullptr;
  SPCCL_CHECK(postRequest(comm, "shm irecv", &posted));
  posted->data = static_cast<char*>(data);
  posted->capacity = capacity;
  posted->stage = ShmStage::ReadPrefix;
  comm->progress();
  *request = posted;
  return spcclSuccess;
}

spcclResult_t shmTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "shm test: NULL request or done");
  return testRequest<ShmComm>(static_cast<ShmRequest*>(request), done, size);
}

spcclResult_t shmPollFd(void* comm, int* fd, short* events) {
  if (comm == nullptr || fd == nullptr || events == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "shm pollFd: NULL argument");
  CommBase* base = asComm(comm);
  *fd = base->fd;
  *events = POLLIN;
  if (base->kind == CommKind::Recv && !asShmComm(comm)->pendingAnswers.empty()) *events |= POLLOUT;
  if (base->kind == CommKind::Send) {
    ShmComm* send = asShmComm(comm);
    *events = 0;
    if (send->failure.failed()) return spcclSuccess;
    if (send->awaitsAnswer()) *events |= POLLIN;
    if (send->hasWritableWork()) *events |= POLLOUT;
  }
  return spcclSuccess;
}

spcclResult_t shmDescribe(void* comm, char* buf, size_t len) {
  return describePeer("shm", comm, buf, len);
}

constexpr spcclNet_v2_t kShmNet = {"shm",
                                   SPCCL_NET_ABI_VERSION,
                                   shmInit,
                                   shmDevices,
                                   shmGetProperties,
                                   shmListen,
                                   shmConnect,
                                   shmAccept,
                                   regMrNotNeeded,
                                   nullptr,
                                   deregMrNotNeeded,
                                   shmIsend,
                                   shmIrecv,
                                   shmTest,
                                   shmPollFd,
                                   shmDescribe,
                                   closeComm<ShmComm>,
                                   closeComm<ShmComm>,
                                   closeComm<CommBase>};

// ---- cuda_ipc: shm's comms that also carry device memory (shm_device.h) ----

spcclResult_t cudaIpcGetProperties(int dev, spcclNetProperties_v2_t* props) {
  SPCCL_CHECK(shmGetProperties(dev, props));
  std::snprintf(props->name, sizeof(props->name), "cuda_ipc");
  props->ptrSupport = SPCCL_PTR_HOST | SPCCL_PTR_CUDA;
  return spcclSuccess;
}

spcclResult_t cudaIpcConnect(int dev, const void* handle, void** sendComm) {
  SPCCL_CHECK(shmConnect(dev, handle, sendComm));
  asShmComm(*sendComm)->deviceIpc = true;
  return spcclSuccess;
}

spcclResult_t cudaIpcAccept(void* listenComm, void** recvComm) {
  SPCCL_CHECK(shmAccept(listenComm, recvComm));
  if (*recvComm != nullptr) asShmComm(*recvComm)->deviceIpc = true;
  return spcclSuccess;
}

// Nothing to register: a device buffer is exported per message.
spcclResult_t cudaIpcRegMr(void*, void*, size_t, int type, void** mhandle) {
  if (mhandle != nullptr) *mhandle = nullptr;
  if (type != SPCCL_PTR_HOST && type != SPCCL_PTR_CUDA)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "cuda_ipc regMr: memory type %d is not supported (host or CUDA memory)",
                      type);
  return spcclSuccess;
}

// shm's table but for what device memory changes: the name, the
// properties, marking the comms, and registration.
constexpr spcclNet_v2_t cudaIpcTable() {
  spcclNet_v2_t net = kShmNet;
  net.name = "cuda_ipc";
  net.getProperties = cudaIpcGetProperties;
  net.connect = cudaIpcConnect;
  net.accept = cudaIpcAccept;
  net.regMr = cudaIpcRegMr;
  return net;
}

constexpr spcclNet_v2_t kCudaIpcNet = cudaIpcTable();

}  // namespace
}  // namespace spccl::transport

extern "C" const spcclNet_v2_t* spcclNetShm() { return &spccl::transport::kShmNet; }
extern "C" const spcclNet_v2_t* spcclNetCudaIpc() { return &spccl::transport::kCudaIpcNet; }

// CUDA IPC (src/device/cuda_ipc.h) and the cuda_ipc transport
// (transports/shm/shm_net.h) between two real processes: one exports a
// range of its device memory, the other opens it, copies from it, writes
// into it; then device messages through the transport. Driver calls go
// through driver_api.h, so the binary runs against the emulated driver in
// CI (whose device memory is a memfd the peer maps: a write by one process
// is seen by the other only if both map the same memory) and against
// NVIDIA's on a lent GPU (tests/gpu/run_on_gpu.sh, stage cudaipc).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/peer_allocations.h"
#include "device/peer_readable_scratch.h"
#include "driver_api.h"
#include "emulated_driver.h"
#include "spccl_net.h"
#include "transports/shm/shm_net.h"
#include "transports/shm/shm_testing.h"

using namespace spccl::testing;
using spccl::device::ExportedDeviceRange;
using spccl::device::PeerDeviceMemory;

namespace {

constexpr size_t kBytes = 1 << 20;
constexpr size_t kOffset = 4096;
constexpr size_t kRange = 64 << 10;

bool sendAll(int fd, const void* data, size_t bytes) {
  return send(fd, data, bytes, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes);
}
// Exactly `bytes`, within 10 s.
bool recvAll(int fd, void* data, size_t bytes) {
  pollfd ready{fd, POLLIN, 0};
  return poll(&ready, 1, 10000) == 1 &&
         recv(fd, data, bytes, MSG_WAITALL) == static_cast<ssize_t>(bytes);
}

unsigned char patternAt(size_t i, int round = 0) {
  return static_cast<unsigned char>(i * 7 + 3 + round);
}

std::vector<unsigned char> pattern(size_t bytes, size_t from = 0, int round = 0) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = patternAt(from + i, round);
  return v;
}

// Device memory of `bytes` (cuMemAlloc) holding `contents`, freed at the end.
struct DeviceBytes {
  DeviceBytes(const DriverApi* api, size_t bytes, const std::vector<unsigned char>& contents = {})
      : api(api), bytes(bytes) {
    if (api->memAlloc(&address, bytes) != 0) address = 0;
    if (address != 0 && !contents.empty())
      api->memcpyHtoD(address, contents.data(), contents.size());
  }
  ~DeviceBytes() {
    if (address != 0) api->memFree(address);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* at(size_t offset) const { return reinterpret_cast<void*>(address + offset); }
  std::vector<unsigned char> read(size_t offset, size_t count) const {
    std::vector<unsigned char> out(count);
    api->memcpyDtoH(out.data(), address + offset, count);
    return out;
  }
  const DriverApi* api;
  size_t bytes;
  uint64_t address = 0;
};

// The first index where got and expected differ, or -1.
long firstDifference(const std::vector<unsigned char>& got,
                     const std::vector<unsigned char>& expected) {
  for (size_t i = 0; i < got.size() && i < expected.size(); ++i)
    if (got[i] != expected[i]) return static_cast<long>(i);
  return got.size() == expected.size() ? -1
                                       : static_cast<long>(std::min(got.size(), expected.size()));
}

int childStatus() { return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk; }

// Runs owner(fd) and peer(fd) in two processes joined by a socket pair.
void runPair(const std::function<int(int)>& first, const std::function<int(int)>& second) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  const auto outcomes = forkRanks(2, [&](int rank, const spcclUniqueId&) {
    close(fds[1 - rank]);
    return rank == 0 ? first(fds[0]) : second(fds[1]);
  });
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(outcomes[0].status, kChildOk) << "the first process";
  EXPECT_EQ(outcomes[1].status, kChildOk) << "the second process";
}

// ---- device/cuda_ipc.h ----

// Exports [kOffset, +kRange), then checks that the peer's write landed.
int owner(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  DeviceBytes memory(api, kBytes, pattern(kBytes));
  ExportedDeviceRange range{};
  if (spccl::device::exportDeviceRange(memory.at(kOffset), kRange, "sendbuff", &range) !=
      spcclSuccess) {
    ADD_FAILURE() << spccl::threadLastError();
    return kChildWrongResult;
  }
  EXPECT_EQ(range.offset, kOffset);
  EXPECT_EQ(range.bytes, kRange);
  char done = 0;
  if (!sendAll(fd, &range, sizeof(range)) || !recvAll(fd, &done, 1)) return kChildTooSlow;
  // The peer wrote 0xAB over the first 100 bytes of the range, nothing else.
  EXPECT_EQ(firstDifference(memory.read(kOffset, 100), std::vector<unsigned char>(100, 0xAB)), -1);
  EXPECT_EQ(memory.read(kOffset + 100, 1)[0], patternAt(kOffset + 100));
  return childStatus();
}

// Opens the handle, copies the range into its own device memory, writes
// into the owner's.
int peer(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  ExportedDeviceRange range{};
  if (!recvAll(fd, &range, sizeof(range))) return kChildTooSlow;
  void* stream = nullptr;
  api->streamCreate(&stream, 1);
  {
    PeerDeviceMemory opened;
    if (opened.open(range.handle, "the owner") != spcclSuccess) {
      ADD_FAILURE() << spccl::threadLastError();
      return kChildWrongResult;
    }
    DeviceBytes mine(api, kRange);
    EXPECT_EQ(spccl::device::copyFromPeer(opened, range.offset, mine.at(0), range.bytes, stream),
              spcclSuccess);
    api->streamSynchronize(stream);
    EXPECT_EQ(firstDifference(mine.read(0, kRange), pattern(kRange, kOffset)), -1);
    const std::vector<unsigned char> marks(100, 0xAB);
    api->memcpyHtoD(mine.address, marks.data(), marks.size());
    EXPECT_EQ(api->memcpyAsync(opened.base() + range.offset, mine.address, 100, stream), 0);
    api->streamSynchronize(stream);
  }  // closed here
  const char done = 1;
  if (!sendAll(fd, &done, 1)) return kChildTooSlow;
  api->streamDestroy(stream);
  return childStatus();
}

TEST(CudaIpc, APeerProcessCopiesFromAndWritesIntoExportedDeviceMemory) { runPair(owner, peer); }

TEST(CudaIpc, BadRangesAndOwnHandlesAreRefusedNamingTheBuffer) {
  // In a child: the driver must not be initialised in the parent, which
  // forks the other tests' processes.
  const auto outcomes = forkRanks(1, [](int, const spcclUniqueId&) {
    const DriverApi* api = driverWithContext();
    if (api == nullptr) return kChildInitFailed;
    DeviceBytes memory(api, kBytes);
    std::vector<unsigned char> host(16);
    ExportedDeviceRange range{};
    EXPECT_EQ(spccl::device::exportDeviceRange(host.data(), host.size(), "recvbuff", &range),
              spcclInvalidArgument);
    EXPECT_NE(spccl::threadLastError().find("recvbuff"), std::string::npos)
        << spccl::threadLastError();
    EXPECT_EQ(spccl::device::exportDeviceRange(memory.at(kBytes - 8), 16, "sendbuff", &range),
              spcclInvalidArgument);
    EXPECT_NE(spccl::threadLastError().find("leave its allocation"), std::string::npos)
        << spccl::threadLastError();
    EXPECT_EQ(spccl::device::exportDeviceRange(memory.at(0), kBytes, "sendbuff", &range),
              spcclSuccess);
    PeerDeviceMemory own;
    EXPECT_EQ(own.open(range.handle, "this process"), spcclSystemError);
    EXPECT_NE(spccl::threadLastError().find("cuIpcOpenMemHandle"), std::string::npos)
        << spccl::threadLastError();
    return childStatus();
  });
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

// ---- the cuda_ipc transport ----

const spcclNet_v2_t* cudaIpc() {
  static const spcclNet_v2_t* net = [] {
    spcclNetInitArgs_v2_t args{};
    args.timeoutMs = 10000;
    const spcclNet_v2_t* table = spcclNetCudaIpc();
    return table->init(&args) == spcclSuccess ? table : nullptr;
  }();
  return net;
}

// Tests `request` until it is done or fails, at most 10 s.
spcclResult_t waitRequest(void* request, size_t* size) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    int done = 0;
    const spcclResult_t res = cudaIpc()->test(request, &done, size);
    if (res != spcclSuccess || done) return res;
    usleep(100);
  }
  return spcclTimeout;
}

// The receiving process: listens, hands its handle to the sender, accepts.
void* acceptSender(int fd, void** listenComm) {
  unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE] = {};
  if (cudaIpc() == nullptr || cudaIpc()->listen(0, handle, listenComm) != spcclSuccess ||
      !sendAll(fd, handle, sizeof(handle)))
    return nullptr;
  void* recvComm = nullptr;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (recvComm == nullptr && std::chrono::steady_clock::now() < until) {
    if (cudaIpc()->accept(*listenComm, &recvComm) != spcclSuccess) return nullptr;
    usleep(100);
  }
  return recvComm;
}

void* connectToReceiver(int fd) {
  unsigned char handle[SPCCL_NET_HANDLE_MAXSIZE] = {};
  void* sendComm = nullptr;
  if (cudaIpc() == nullptr || !recvAll(fd, handle, sizeof(handle)) ||
      cudaIpc()->connect(0, handle, &sendComm) != spcclSuccess)
    return nullptr;
  return sendComm;
}

constexpr size_t kMessage = 512 << 10;

// Two messages from the sender's device memory (its buffer reused, with
// new contents: the second must not come from a stale copy) into device
// memory here, then a small one from host memory through the socket.
int deviceReceiver(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  void* listenComm = nullptr;
  void* recvComm = acceptSender(fd, &listenComm);
  if (recvComm == nullptr) return kChildInitFailed;
  DeviceBytes target(api, kMessage);
  const spccl::transport::ShmReceiveStats before = spccl::transport::shmReceiveStats();
  for (int round = 0; round < 2; ++round) {
    void* request = nullptr;
    size_t size = 0;
    EXPECT_EQ(cudaIpc()->irecv(recvComm, target.at(0), kMessage, nullptr, &request), spcclSuccess);
    EXPECT_EQ(waitRequest(request, &size), spcclSuccess) << spccl::threadLastError();
    EXPECT_EQ(size, kMessage);
    EXPECT_EQ(firstDifference(target.read(0, kMessage), pattern(kMessage, 0, round)), -1)
        << "message " << round;
  }
  std::vector<unsigned char> host(64);
  void* request = nullptr;
  size_t size = 0;
  EXPECT_EQ(cudaIpc()->irecv(recvComm, host.data(), host.size(), nullptr, &request), spcclSuccess);
  EXPECT_EQ(waitRequest(request, &size), spcclSuccess) << spccl::threadLastError();
  EXPECT_EQ(firstDifference(host, pattern(64)), -1);
  const spccl::transport::ShmReceiveStats after = spccl::transport::shmReceiveStats();
  EXPECT_EQ(after.deviceCopies - before.deviceCopies, 2u);
  EXPECT_EQ(after.inlineMessages - before.inlineMessages, 1u);
  const char done = 1;
  sendAll(fd, &done, 1);
  cudaIpc()->closeRecv(recvComm);
  cudaIpc()->closeListen(listenComm);
  return childStatus();
}

int deviceSender(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  void* sendComm = connectToReceiver(fd);
  if (sendComm == nullptr) return kChildInitFailed;
  DeviceBytes source(api, 2 * kMessage);
  for (int round = 0; round < 2; ++round) {
    // The payload lies at an offset in its allocation.
    const std::vector<unsigned char> contents = pattern(kMessage, 0, round);
    api->memcpyHtoD(source.address + kMessage / 2, contents.data(), contents.size());
    void* request = nullptr;
    size_t size = 0;
    EXPECT_EQ(cudaIpc()->isend(sendComm, source.at(kMessage / 2), kMessage, nullptr, &request),
              spcclSuccess)
        << spccl::threadLastError();
    // Done only once the receiver copied: then the buffer may change.
    EXPECT_EQ(waitRequest(request, &size), spcclSuccess) << spccl::threadLastError();
  }
  const std::vector<unsigned char> host = pattern(64);
  void* request = nullptr;
  size_t size = 0;
  EXPECT_EQ(cudaIpc()->isend(sendComm, host.data(), host.size(), nullptr, &request), spcclSuccess);
  EXPECT_EQ(waitRequest(request, &size), spcclSuccess) << spccl::threadLastError();
  char done = 0;
  recvAll(fd, &done, 1);  // the receiver has what it needs before this side closes
  cudaIpc()->closeSend(sendComm);
  return childStatus();
}

TEST(CudaIpcTransport, DeviceMessagesGoPeerToPeerAndHostOnesThroughTheSocket) {
  runPair(deviceReceiver, deviceSender);
}

// Device memory cannot land in pageable host memory (no CUDA context to
// copy in, and the CPU cannot stream device memory): both ends fail, each
// saying why.
int refusingReceiver(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  void* listenComm = nullptr;
  void* recvComm = acceptSender(fd, &listenComm);
  if (recvComm == nullptr) return kChildInitFailed;
  std::vector<unsigned char> pageable(kMessage);
  void* request = nullptr;
  size_t size = 0;
  EXPECT_EQ(cudaIpc()->irecv(recvComm, pageable.data(), kMessage, nullptr, &request), spcclSuccess);
  EXPECT_NE(waitRequest(request, &size), spcclSuccess);
  EXPECT_NE(spccl::threadLastError().find("receive into device, pinned or managed memory"),
            std::string::npos)
      << spccl::threadLastError();
  const char done = 1;
  sendAll(fd, &done, 1);
  cudaIpc()->closeRecv(recvComm);
  cudaIpc()->closeListen(listenComm);
  return childStatus();
}

int refusedSender(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  void* sendComm = connectToReceiver(fd);
  if (sendComm == nullptr) return kChildInitFailed;
  DeviceBytes source(api, kMessage);
  void* request = nullptr;
  size_t size = 0;
  EXPECT_EQ(cudaIpc()->isend(sendComm, source.at(0), kMessage, nullptr, &request), spcclSuccess);
  EXPECT_EQ(waitRequest(request, &size), spcclRemoteError);
  EXPECT_NE(spccl::threadLastError().find("could not copy"), std::string::npos)
      << spccl::threadLastError();
  char done = 0;
  recvAll(fd, &done, 1);
  cudaIpc()->closeSend(sendComm);
  return childStatus();
}

TEST(CudaIpcTransport, DeviceMessageIntoPageableMemoryFailsBothEnds) {
  runPair(refusingReceiver, refusedSender);
}

// ---- device/peer_allocations.h ----

// The emulation's hooks (emulated_driver.h), where the loaded driver is
// the emulation; nullptr on NVIDIA's.
template <typename Fn>
Fn emulationHook(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// Exports two allocations of kRange bytes (patterns of rounds 1 and 2),
// then holds them until the peer is done.
int twoAllocationsOwner(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  DeviceBytes first(api, kRange, pattern(kRange, 0, 1)), second(api, kRange, pattern(kRange, 0, 2));
  ExportedDeviceRange ranges[2]{};
  if (spccl::device::exportDeviceRange(first.at(0), kRange, "first", &ranges[0]) != spcclSuccess ||
      spccl::device::exportDeviceRange(second.at(0), kRange, "second", &ranges[1]) != spcclSuccess)
    return kChildWrongResult;
  char done = 0;
  if (!sendAll(fd, ranges, sizeof(ranges)) || !recvAll(fd, &done, 1)) return kChildTooSlow;
  return kChildOk;
}

// With a bound of 1, a call copies from the first allocation on
// PeerAllocations' stream behind the emulation's closed device-copy gate;
// the next call opens the second, which evicts the first: it must stay
// mapped until the queued copy ran, and be closed at the call after,
// which opens both: neither may be evicted while that call runs.
int evictingPeer(int fd) {
  const DriverApi* api = driverWithContext();
  if (api == nullptr) return kChildInitFailed;
  using Counters = EmuCudaCounters (*)();
  using Gate = void (*)(uint64_t);
  const auto counters = emulationHook<Counters>("emuCudaCounters");
  const auto closeGate = emulationHook<Gate>("emuCudaCloseDeviceCopyGate");
  const auto openGate = emulationHook<void (*)()>("emuCudaOpenDeviceCopyGate");
  ExportedDeviceRange ranges[2]{};
  if (!recvAll(fd, ranges, sizeof(ranges))) return kChildTooSlow;
  DeviceBytes target(api, kRange);
  if (counters == nullptr || closeGate == nullptr || openGate == nullptr) {
    ADD_FAILURE() << "the emulated driver's hooks are missing (the test checked for them)";
  } else {
    spccl::device::PeerAllocations peers(1);
    EXPECT_EQ(peers.bindContext("test"), spcclSuccess) << spccl::threadLastError();
    spccl::device::CuStream stream = nullptr;
    EXPECT_EQ(peers.stream(&stream), spcclSuccess);
    const int64_t mappedBefore = counters().openedPeerMappings;
    closeGate(0);
    {
      const spccl::device::PeerAllocations::OneCall call(peers);
      spccl::device::CuDevicePtr base = 0;
      EXPECT_EQ(peers.open(1, ranges[0].handle, &base), spcclSuccess);
      EXPECT_EQ(api->memcpyAsync(target.address, base, kRange, stream), 0);
    }
    {
      const spccl::device::PeerAllocations::OneCall call(peers);
      spccl::device::CuDevicePtr base = 0;
      EXPECT_EQ(peers.open(1, ranges[1].handle, &base), spcclSuccess);
    }
    EXPECT_EQ(peers.opened(), 1u) << "the bound";
    EXPECT_EQ(peers.retiring(), 1u) << "the first, for the queued copy";
    EXPECT_EQ(counters().openedPeerMappings - mappedBefore, 2) << "closed under a queued copy";
    openGate();
    EXPECT_EQ(api->streamSynchronize(stream), 0);
    EXPECT_EQ(firstDifference(target.read(0, kRange), pattern(kRange, 0, 1)), -1);
    {
      // Both again in one call: the first's old mapping closes (its copy
      // ran), and neither this call opens is evicted for the other.
      const spccl::device::PeerAllocations::OneCall call(peers);
      EXPECT_EQ(peers.retiring(), 0u) << "closed once the copy ran";
      spccl::device::CuDevicePtr bases[2]{};
      EXPECT_EQ(peers.open(1, ranges[0].handle, &bases[0]), spcclSuccess);
      EXPECT_EQ(peers.open(1, ranges[1].handle, &bases[1]), spcclSuccess);
      EXPECT_EQ(peers.opened(), 2u) << "an allocation the running call uses was evicted";
      EXPECT_EQ(api->memcpyAsync(target.address, bases[1], kRange, stream), 0);
      EXPECT_EQ(api->streamSynchronize(stream), 0);
      EXPECT_EQ(firstDifference(target.read(0, kRange), pattern(kRange, 0, 2)), -1);
    }
    EXPECT_EQ(peers.opened(), 1u) << "back to the bound at the call's end";
    EXPECT_EQ(peers.retiring(), 0u) << "nothing queued: closed at once";
    EXPECT_EQ(counters().openedPeerMappings - mappedBefore, 1);
  }
  char done = 1;
  if (!sendAll(fd, &done, 1)) return kChildTooSlow;
  return childStatus();
}

TEST(PeerAllocations, AnEvictedAllocationStaysMappedUntilTheQueuedCopyRan) {
  // Its copy gate and mapping counter are the emulation's: NVIDIA's driver
  // has neither. Loaded, not initialised, before the ranks fork.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr || dlsym(driver, "emuCudaCloseDeviceCopyGate") == nullptr)
    GTEST_SKIP() << "needs the emulated CUDA driver (tests/cuda_emulation)";
  runPair(twoAllocationsOwner, evictingPeer);
}

// A call's body takes the communicator's scratch on a worker thread while
// the API caller's thread may be reserving a larger one; cuMemAlloc may
// wait for the device, and so for the stream that body holds. So take()
// must not wait for a reserve() inside cuMemAlloc (it did: reserve held
// the lock across the allocation, a deadlock on a GPU).
TEST(PeerReadableScratch, TakeDoesNotWaitForAReserveInsideCuMemAlloc) {
  const DriverApi* api = driverWithContext();
  const auto hold = emulationHook<void (*)(int)>("emuCudaHoldMemAllocs");
  const auto waiting = emulationHook<int (*)()>("emuCudaMemAllocsWaiting");
  if (api == nullptr || hold == nullptr || waiting == nullptr)
    GTEST_SKIP() << "needs the emulated CUDA driver (tests/cuda_emulation)";
  ASSERT_NE(spccl::device::cudaDriver(), nullptr);
  spccl::device::PeerReadableScratch scratch;
  spccl::device::CuDevicePtr first = 0;
  ASSERT_EQ(scratch.reserve(4096, "test", &first), spcclSuccess) << spccl::threadLastError();
  hold(1);
  std::thread reserving([&scratch] {
    (void)driverWithContext();  // this thread's current context
    spccl::device::CuDevicePtr grown = 0;
    EXPECT_EQ(scratch.reserve(1 << 20, "test", &grown), spcclSuccess) << spccl::threadLastError();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (waiting() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(waiting(), 1) << "the reserve never reached cuMemAlloc";
  const auto start = std::chrono::steady_clock::now();
  spccl::device::CuDevicePtr taken = 0;
  EXPECT_TRUE(scratch.take(4096, &taken)) << "the old scratch is still there to take";
  EXPECT_EQ(taken, first);
  const auto tookMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  EXPECT_LT(tookMs, 1000) << "take() waited for the reserve's cuMemAlloc";
  hold(0);
  reserving.join();
  EXPECT_TRUE(scratch.take(1 << 20, &taken)) << "grown once the allocation returned";
  EXPECT_NE(taken, first);
  scratch.release();
}

// Two callers' threads reserve a larger scratch at once (review): the
// second waits for the first's cuMemAlloc and takes its block, so one
// allocation is made, not two (the loser's kept unused until release()).
TEST(PeerReadableScratch, ConcurrentReservesAllocateOnce) {
  const DriverApi* api = driverWithContext();
  const auto hold = emulationHook<void (*)(int)>("emuCudaHoldMemAllocs");
  const auto waiting = emulationHook<int (*)()>("emuCudaMemAllocsWaiting");
  const auto counters = emulationHook<EmuCudaCounters (*)()>("emuCudaCounters");
  if (api == nullptr || hold == nullptr || waiting == nullptr || counters == nullptr)
    GTEST_SKIP() << "needs the emulated CUDA driver (tests/cuda_emulation)";
  ASSERT_NE(spccl::device::cudaDriver(), nullptr);
  spccl::device::PeerReadableScratch scratch;
  const int64_t liveBefore = counters().liveAllocations;
  hold(1);
  spccl::device::CuDevicePtr grown[2] = {0, 0};
  std::vector<std::thread> reserving;
  for (int t = 0; t < 2; ++t)
    reserving.emplace_back([&scratch, &grown, t] {
      (void)driverWithContext();  // this thread's current context
      EXPECT_EQ(scratch.reserve(1 << 20, "test", &grown[t]), spcclSuccess)
          << spccl::threadLastError();
    });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (waiting() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the other thread's chance
  EXPECT_EQ(waiting(), 1) << "both reserves reached cuMemAlloc";
  hold(0);
  for (std::thread& t : reserving) t.join();
  EXPECT_EQ(grown[0], grown[1]);
  EXPECT_EQ(counters().liveAllocations - liveBefore, 1) << "more than one block allocated";
  scratch.release();
}

}  // namespace

// Ranks of the emulation tests: forked processes over real sockets, each
// with the emulated driver (emulated_driver.h) current, and emulated
// device buffers of floats.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "emulated_driver.h"
#include "spccl.h"

extern "C" {
// The emulated driver's own entry points, for the tests' copies.
int cuMemcpyDtoHAsync_v2(void* dst, uint64_t src, size_t bytes, void* stream);
int cuMemcpyHtoDAsync_v2(uint64_t dst, const void* src, size_t bytes, void* stream);
int cuStreamSynchronize(void* stream);
}

namespace spccl::testing {

// blocking false: a non-blocking creation (spcclConfig_t.blocking 0),
// still running when this returns; the first call waits for it.
inline spcclComm_t initRank(int n, const spcclUniqueId& id, int rank, bool blocking = true) {
  emuCudaSetCurrent(1);
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.profileLinks = 0;
  config.timeoutMs = 20000;
  config.blocking = blocking ? 1 : 0;
  spcclComm_t comm = nullptr;
  const spcclResult_t created = spcclCommInitRankConfig(&comm, n, id, rank, &config);
  if (created != spcclSuccess && (blocking || created != spcclInProgress)) _exit(kChildInitFailed);
  return comm;
}

// count floats of emulated device memory holding `values`, copied in on `stream`.
struct DeviceFloats {
  DeviceFloats(size_t count, void* stream, const std::vector<float>& values = {})
      : count(count),
        data(static_cast<float*>(emuCudaAlloc(count * sizeof(float), EmuCudaDevice))) {
    if (!values.empty()) upload(values, stream);
  }
  ~DeviceFloats() { emuCudaFree(data); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  void upload(const std::vector<float>& values, void* stream) {
    cuMemcpyHtoDAsync_v2(reinterpret_cast<uint64_t>(data), values.data(), count * sizeof(float),
                         stream);
  }
  std::vector<float> download(void* stream) const {
    std::vector<float> out(count);
    cuMemcpyDtoHAsync_v2(out.data(), reinterpret_cast<uint64_t>(data), count * sizeof(float),
                         stream);
    cuStreamSynchronize(stream);
    return out;
  }
  size_t count;
  float* data;
};

inline std::vector<float> rankValues(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((rank + 1) * 1000 + i % 97);
  return v;
}

inline float sumOverRanks(int n, size_t i) {
  float s = 0;
  for (int r = 0; r < n; ++r) s += static_cast<float>((r + 1) * 1000 + i % 97);
  return s;
}

// Runs body on n forked ranks, each with its communicator; every rank
// must return kChildOk without a failed expectation. With `devices`, rank
// r creates its communicator on emulated device devices[r]
// (EMU_CUDA_DEVICES, emulated_devices.h).
inline void runOnRanks(int n, const std::function<int(int, spcclComm_t)>& body,
                       const std::vector<int>& devices = {}) {
  auto outcomes = forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    if (!devices.empty() && emuCudaSetCurrentDevice(devices[rank]) != 0) return kChildInitFailed;
    spcclComm_t comm = initRank(n, id, rank);
    const int status = body(rank, comm);
    spcclCommDestroy(comm);
    return ::testing::Test::HasFailure() && status == kChildOk ? kChildWrongResult : status;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// EMU_CUDA_DEVICES and EMU_CUDA_NO_PEER_ACCESS for the ranks a test forks
// (the parent calls no spccl), unset at its end.
class EmulatedHost {
 public:
  EmulatedHost(int devices, const char* noPeerAccess) {
    setenv("EMU_CUDA_DEVICES", std::to_string(devices).c_str(), 1);
    if (noPeerAccess != nullptr) setenv("EMU_CUDA_NO_PEER_ACCESS", noPeerAccess, 1);
  }
  ~EmulatedHost() {
    unsetenv("EMU_CUDA_DEVICES");
    unsetenv("EMU_CUDA_NO_PEER_ACCESS");
  }
  EmulatedHost(const EmulatedHost&) = delete;
  EmulatedHost& operator=(const EmulatedHost&) = delete;
};

// body(rank, comm, stream) on n forked ranks (devices as runOnRanks), each
// with a stream of its own, destroyed after body.
inline void runOnRanksWithStream(int n, const std::function<void(int, spcclComm_t, void*)>& body,
                                 const std::vector<int>& devices = {}) {
  runOnRanks(
      n,
      [&body](int rank, spcclComm_t comm) {
        void* stream = emuCudaStreamCreate();
        body(rank, comm, stream);
        emuCudaStreamDestroy(stream);
        return kChildOk;
      },
      devices);
}

// The same on 3 ranks, rank r on emulated device r; noPeerAccess as
// EMU_CUDA_NO_PEER_ACCESS ("2:0": device 2 cannot access device 0's
// memory), or nullptr.
inline void runOnThreeDevices(const char* noPeerAccess,
                              const std::function<void(int, spcclComm_t, void*)>& body) {
  EmulatedHost host(3, noPeerAccess);
  runOnRanksWithStream(3, body, {0, 1, 2});
}

// For emuCudaLaunch: holds a stream until `released` (a
// std::atomic<bool>), or 10 s, so that a failing test ends.
inline void holdStreamUntilReleased(void* released) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!static_cast<std::atomic<bool>*>(released)->load() &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace spccl::testing

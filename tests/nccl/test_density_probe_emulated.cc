// The density probe (interpose/nccl/density_probe.h) on device memory of
// the emulated CUDA driver (tests/cuda_emulation): the sample is copied in
// the order of the caller's stream, so it holds what a "kernel" queued
// before the call wrote, and the two ranks agree on one value. Not a GPU:
// it checks the probe's stream order and agreement, nothing about speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "../cuda_emulation/emulated_driver.h"
#include "density_probe.h"
#include "interposed_comm.h"
#include "memory_kind.h"

namespace spccl::nccl {
namespace {

struct Fill {
  float* data;
  size_t count;
  size_t every;  // every k-th element becomes 1
};

// A stand-in for the kernel that produced the gradient: late, so that a
// probe that did not wait for the stream would read zeros.
void fillLate(void* arg) {
  const auto* f = static_cast<const Fill*>(arg);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (size_t i = 0; i < f->count; i += f->every) f->data[i] = 1.0f;
}

TEST(NcclDensityProbeEmulated, SamplesDeviceMemoryInStreamOrderAndRanksAgree) {
  spcclUniqueId id;
  ASSERT_EQ(spcclGetUniqueId(&id), spcclSuccess);
  const size_t count = size_t{1} << 18;
  const size_t every[2] = {100, 4};  // densities 0.01 and 0.25
  double agreed[2] = {-1, -1};
  spcclResult_t results[2] = {spcclInternalError, spcclInternalError};
  bool device[2] = {false, false};
  const EmuCudaCounters before = emuCudaCounters();
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      emuCudaSetCurrent(1);
      InterposedComm comm;
      if (spcclCommInitRank(&comm.spccl, 2, id, rank) != spcclSuccess) return;
      comm.rank = rank;
      comm.nranks = 2;
      auto* data = static_cast<float*>(emuCudaAlloc(count * sizeof(float), EmuCudaDevice));
      std::fill(data, data + count, 0.0f);
      device[rank] = memoryKindOf(data) == MemoryKind::Device;
      void* stream = emuCudaStreamCreate();
      Fill fill{data, count, every[rank]};
      emuCudaLaunch(stream, fillLate, &fill);
      CollCall call;
      call.name = "ncclAllReduce";
      call.sendbuff = data;
      call.recvbuff = data;
      call.count = count;
      call.datatype = ncclFloat32;
      call.stream = static_cast<cudaStream_t>(stream);
      results[rank] = agreedDensity(&comm, call, &agreed[rank]);
      emuCudaStreamDestroy(stream);
      emuCudaFree(data);
      spcclCommDestroy(comm.spccl);
      comm.spccl = nullptr;
    });
  for (std::thread& t : ranks) t.join();
  ASSERT_EQ(results[0], spcclSuccess);
  ASSERT_EQ(results[1], spcclSuccess);
  EXPECT_TRUE(device[0] && device[1]) << "the emulated driver's memory is not device memory";
  EXPECT_GE(emuCudaCounters().copiesFromDevice - before.copiesFromDevice, 2 * kSampleChunks);
  EXPECT_EQ(agreed[0], agreed[1]);
  EXPECT_NEAR(agreed[0], (0.01 + 0.25) / 2, 0.01);
}

}  // namespace
}  // namespace spccl::nccl

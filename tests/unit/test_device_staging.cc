// The device layer where no CUDA driver is loaded (CI, and every host
// without a GPU): every buffer is host memory, staging passes pointers
// through unchanged, and pinned staging fails with a clear error. The GPU
// side is tests/gpu (test_gpu_collectives), run on a lent GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/check.h"
#include "device/cuda_driver.h"
#include "device/memory_kind.h"
#include "device/pinned_pool.h"
#include "device/staging.h"

using namespace spccl;
using namespace spccl::device;

namespace {

TEST(DeviceStaging, NoDriverIsLoadedInThisProcess) {
  // The premise of the tests below: libspccl never loads the driver itself.
  EXPECT_EQ(cudaDriver(), nullptr);
  EXPECT_EQ(currentCudaDevice(), -1);
}

TEST(DeviceStaging, EveryBufferIsHostMemoryWithoutTheDriver) {
  std::vector<float> heap(16);
  float stack[4] = {};
  EXPECT_EQ(locateBuffer(heap.data()).kind, MemoryKind::Host);
  EXPECT_EQ(locateBuffer(stack).kind, MemoryKind::Host);
  EXPECT_EQ(locateBuffer(nullptr).kind, MemoryKind::Host);
  EXPECT_EQ(locateBuffer(heap.data()).device, -1);
  EXPECT_TRUE(cpuCanAccess(MemoryKind::Managed));
  EXPECT_TRUE(cpuCanAccess(MemoryKind::PinnedHost));
  EXPECT_FALSE(cpuCanAccess(MemoryKind::Device));
  EXPECT_STREQ(memoryKindName(MemoryKind::Device), "device memory");
}

TEST(DeviceStaging, HostBuffersPassThroughUnstaged) {
  std::vector<float> send(8), recv(8);
  StagingSet set;
  set.add("sendbuff", send.data(), send.size() * sizeof(float), Access::Read);
  set.add("recvbuff", recv.data(), recv.size() * sizeof(float), Access::Write);
  EXPECT_FALSE(set.hasDeviceMemory());
  EXPECT_EQ(set.device(), -1);
  EXPECT_EQ(set.requireSameKind("spcclAllReduce", "sendbuff", "recvbuff"), spcclSuccess);
  EXPECT_EQ(set.allocate(), spcclSuccess);  // nothing to allocate
  EXPECT_EQ(set.hostView(send.data()), send.data());
  EXPECT_EQ(set.hostView(recv.data() + 3), recv.data() + 3);
  EXPECT_EQ(set.hostView(nullptr), nullptr);
  // Host buffers need no copies, with or without a stream.
  EXPECT_EQ(set.copyIn(nullptr), spcclSuccess);
  EXPECT_EQ(set.copyOut(nullptr), spcclSuccess);
}

TEST(DeviceStaging, PinnedStagingWithoutTheDriverFailsClearly) {
  PinnedBuffer buffer;
  clearThreadLastError();
  EXPECT_EQ(acquirePinned(1024, &buffer), spcclInternalError);
  EXPECT_NE(threadLastError().find("CUDA driver"), std::string::npos) << threadLastError();
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(pinnedBytesHeld(), 0u);
}

}  // namespace

// The pinned host memory of a token mask all-reduce of a device tensor
// (core/device_token_call.h) against the emulated driver: sized from the
// rows the mask keeps where the mask can be read when the call is made (a
// host mask; a device mask with no stream), so a call that keeps more
// rows than the one before needs a larger buffer; and a host mask that
// keeps more rows by the time the call runs in its stream's order than
// when it was made still gives the staged path's bits (the rows past the
// pinned buffer go through pageable memory). Real ranks, forked: each
// starts with an empty pinned pool. Not a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "device_token_inputs.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// Rows of 4 KiB: a tenth of the tokens fit in the pool's smallest buffers
// (64 KiB multiples) many times less than every token would.
constexpr size_t kWideHidden = 1024;

struct MaskCall {
  std::vector<unsigned char> buff;
  uint64_t pinnedAllocations = 0;
};

// One mask call on rank `rank`'s wide f32 tensor; the mask (host memory,
// or device memory with maskKind EmuCudaDevice) keeps `fraction`.
MaskCall maskCall(spcclComm_t comm, int rank, bool deviceTokens, double fraction, int maskKind,
                  void* stream) {
  setenv("SPCCL_DEVICE_TOKENS", deviceTokens ? "1" : "0", 1);
  const DeviceTensor buff(rank, spcclFloat32, kWideHidden);
  Buffer mask(kTokens, maskKind);
  mask.set(maskOf(fraction).data());
  const uint64_t before = emuCudaCounters().pinnedAllocations;
  EXPECT_EQ(spcclTokenMaskAllReduce(buff.data(), static_cast<const unsigned char*>(mask.data()),
                                    kTokens, kWideHidden, spcclFloat32, spcclSum, nullptr,
                                    spcclPruneZero, comm, stream),
            spcclSuccess)
      << "rank " << rank << " fraction " << fraction << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  MaskCall out;
  out.pinnedAllocations = emuCudaCounters().pinnedAllocations - before;
  out.buff = buff.get(stream);
  unsetenv("SPCCL_DEVICE_TOKENS");
  return out;
}

// A mask keeping a tenth of the rows takes pinned memory for a tenth (and
// the small arrays): the next call, keeping nine tenths, needs a larger
// buffer than the pool holds. Sized for every row, the first would have
// served both. Both calls give the staged path's bits.
TEST(DeviceTokenPinned, MaskCallPinnedRowsFollowTheKeptCount) {
  for (int maskKind : {-1, static_cast<int>(EmuCudaDevice)})
    runOnRanks(2, [maskKind](int rank, spcclComm_t comm) {
      const std::string what = "mask kind " + std::to_string(maskKind);
      const MaskCall few = maskCall(comm, rank, true, 0.1, maskKind, nullptr);
      const MaskCall many = maskCall(comm, rank, true, 0.9, maskKind, nullptr);
      EXPECT_GE(few.pinnedAllocations, 1u) << what;
      EXPECT_EQ(many.pinnedAllocations, 1u) << what << ": the first call's rows were not sized "
                                            << "from its mask";
      EXPECT_TRUE(few.buff == maskCall(comm, rank, false, 0.1, maskKind, nullptr).buff) << what;
      EXPECT_TRUE(many.buff == maskCall(comm, rank, false, 0.9, maskKind, nullptr).buff) << what;
      return kChildOk;
    });
}

// A host mask read in the stream's order: counted (a tenth) when the call
// is made, nine tenths kept when it runs. The rows past the pinned buffer
// go through pageable memory; the result is the staged path's for the
// mask the call ran with.
TEST(DeviceTokenPinned, HostMaskKeepingMoreRowsWhenTheCallRuns) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    setenv("SPCCL_DEVICE_TOKENS", "1", 1);
    const DeviceTensor buff(rank, spcclFloat32, kWideHidden);
    std::vector<unsigned char> mask = maskOf(0.1);
    std::atomic<bool> released{false};
    EXPECT_EQ(emuCudaLaunch(stream, holdStreamUntilReleased, &released), 0);
    const uint64_t before = emuCudaCounters().pinnedAllocations;
    EXPECT_EQ(spcclTokenMaskAllReduce(buff.data(), mask.data(), kTokens, kWideHidden, spcclFloat32,
                                      spcclSum, nullptr, spcclPruneZero, comm, stream),
              spcclSuccess)
        << spcclGetLastError(comm);
    const uint64_t allocated = emuCudaCounters().pinnedAllocations - before;
    const std::vector<unsigned char> more = maskOf(0.9);  // in the same storage
    std::copy(more.begin(), more.end(), mask.begin());
    released = true;
    cuStreamSynchronize(stream);
    unsetenv("SPCCL_DEVICE_TOKENS");
    EXPECT_GE(allocated, 1u);
    const std::vector<unsigned char> got = buff.get(stream);
    EXPECT_TRUE(got == maskCall(comm, rank, false, 0.9, -1, stream).buff) << "rank " << rank;
    spcclResult_t async = spcclSuccess;
    EXPECT_EQ(spcclCommGetAsyncError(comm, &async), spcclSuccess);
    EXPECT_EQ(async, spcclSuccess) << "rank " << rank;
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

}  // namespace

// spcclTokenTopkAllReduce / spcclTokenMaskAllReduce of device tensors with
// the kept rows moved on the device (core/device_token_call.h) against the
// emulated driver: real ranks (forked processes, real sockets), emulated
// device memory, and cuLaunchKernel running HOST stand-ins of spccl's row
// kernels with the same per-byte code as the .cu file
// (emulated_row_kernels.cc). This proves the call's schedule, what it
// copies and its errors; NOT the CUDA kernels, which run only in tests/gpu.
//
// Every result (the tensor and maskOut) is compared bit for bit with the
// staged path (SPCCL_DEVICE_TOKENS=0: the whole tensor through pinned
// memory) on the same inputs, and the bytes the call copied are counted
// exactly: only the kept rows (and the small scores, mask, row indices)
// may cross, so a call that staged the whole tensor fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device_token_inputs.h"
#include "emulated_ranks.h"
#include "rank_failure.h"
#include "spccl.h"
#include "token_call_forms.h"

using namespace spccl::testing;

namespace {

struct Case {
  bool topk = true;
  double keepFraction = 0.5;
  bool compressed = false;
  spcclPrunePolicy_t policy = spcclPruneZero;
  void* stream = nullptr;
  int smallKind = -1;  // where scores, mask and maskOut lie
  int buffKind = EmuCudaDevice;
  spcclDataType_t type = spcclFloat32;
  bool nonBlocking = false;  // spcclItoken...AllReduce, then spcclWait (no stream)

  size_t keep() const { return static_cast<size_t>(keepFraction * kTokens); }
  std::string describe(int rank) const {
    return std::string(topk ? "top-k" : "mask") + " keep " + std::to_string(keepFraction) +
           (compressed ? " compressed" : " dense") +
           (policy == spcclPruneZero ? " prune zero" : " keep local") +
           (stream != nullptr ? " on a stream" : " on the NULL stream") +
           (nonBlocking ? " non-blocking" : "") + " small kind " + std::to_string(smallKind) +
           " type " + std::to_string(type) + " rank " + std::to_string(rank);
  }
};

struct CallCost {
  uint64_t launches, bytesFromDevice, bytesToDevice;
};

struct Outcome {
  std::vector<unsigned char> buff, maskOut;
  CallCost cost{};
  spcclResult_t result = spcclSuccess;
};

// One call with SPCCL_DEVICE_TOKENS as given.
Outcome tokenCall(spcclComm_t comm, int rank, bool deviceTokens, const Case& c) {
  setenv("SPCCL_DEVICE_TOKENS", deviceTokens ? "1" : "0", 1);
  const std::vector<unsigned char> input = tensorOf(rank, c.type);
  Buffer buff(input.size(), c.buffKind);
  buff.set(input.data());
  const TokenSmallArrays small(c.smallKind, rank, c.keepFraction);
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  const EmuCudaCounters before = emuCudaCounters();
  Outcome out;
  out.result = callTokenAllReduce(
      comm,
      {c.topk, c.nonBlocking, c.stream, c.keep(), c.type, c.compressed ? &cfg : nullptr, c.policy},
      buff.data(), small);
  EXPECT_EQ(out.result, spcclSuccess) << c.describe(rank) << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(c.stream);
  const EmuCudaCounters now = emuCudaCounters();
  out.cost = {now.kernelLaunches - before.kernelLaunches,
              now.bytesFromDevice - before.bytesFromDevice,
              now.bytesToDevice - before.bytesToDevice};
  out.buff = buff.get(c.stream);
  if (c.topk) out.maskOut = small.maskOut.get(c.stream);
  unsetenv("SPCCL_DEVICE_TOKENS");
  return out;
}

size_t keptRows(const Case& c) {
  if (c.topk) return c.keep();
  size_t kept = 0;
  for (unsigned char m : maskOf(c.keepFraction)) kept += m;
  return kept;
}

// The device path's tensor and maskOut equal the staged path's bit for
// bit, and it copied exactly the kept rows (and the small arrays).
void compareWithStaged(spcclComm_t comm, int rank, const Case& c) {
  const std::string what = c.describe(rank);
  const Outcome staged = tokenCall(comm, rank, false, c);
  const Outcome device = tokenCall(comm, rank, true, c);
  EXPECT_EQ(staged.cost.launches, 0u) << what << ": the staged path launched kernels";
  const size_t rowBytes = kHidden * spcclTypeSize(c.type), kept = keptRows(c);
  const size_t pruned = kTokens - kept;
  EXPECT_GE(staged.cost.bytesFromDevice, kTokens * rowBytes) << what;
  EXPECT_TRUE(device.buff == staged.buff) << what << ": the tensors differ";
  EXPECT_TRUE(device.maskOut == staged.maskOut) << what << ": maskOut differs";
  const bool small = c.smallKind == EmuCudaDevice;
  const size_t smallIn = small ? (c.topk ? kTokens * sizeof(float) : kTokens) : 0;
  const size_t smallOut = small && c.topk ? kTokens : 0;
  const bool zeroes = c.policy == spcclPruneZero && pruned > 0;
  EXPECT_EQ(device.cost.bytesFromDevice, kept * rowBytes + smallIn)
      << what << ": not only the kept rows copied in";
  EXPECT_EQ(device.cost.bytesToDevice, kept * (rowBytes + 8) + (zeroes ? pruned * 8 : 0) + smallOut)
      << what << ": not only the kept rows copied out";
  EXPECT_EQ(device.cost.launches, (kept > 0 ? 2u : 0u) + (zeroes ? 1u : 0u)) << what;
}

void everyCase(int n, spcclDataType_t type) {
  runOnRanks(n, [type](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (bool topk : {true, false})
      for (double fraction : {0.1, 0.5})
        for (bool compressed : {false, true})
          for (spcclPrunePolicy_t policy : {spcclPruneZero, spcclPruneKeepLocal})
            for (void* s : {static_cast<void*>(nullptr), stream})
              for (int smallKind : {-1, static_cast<int>(EmuCudaDevice)}) {
                Case c;
                c.topk = topk;
                c.keepFraction = fraction;
                c.compressed = compressed;
                c.policy = policy;
                c.stream = s;
                c.smallKind = smallKind;
                c.type = type;
                compareWithStaged(comm, rank, c);
              }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(DeviceToken, Float32EveryCaseN2) { everyCase(2, spcclFloat32); }
TEST(DeviceToken, Float32EveryCaseN3) { everyCase(3, spcclFloat32); }
TEST(DeviceToken, Bfloat16EveryCaseN2) { everyCase(2, spcclBfloat16); }
TEST(DeviceToken, Bfloat16EveryCaseN3) { everyCase(3, spcclBfloat16); }

// The non-blocking forms (no stream; spcclWait).
TEST(DeviceToken, NonBlockingFormsN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (bool topk : {true, false})
      for (bool compressed : {false, true})
        for (spcclPrunePolicy_t policy : {spcclPruneZero, spcclPruneKeepLocal})
          for (int smallKind : {-1, static_cast<int>(EmuCudaDevice)}) {
            Case c;
            c.topk = topk;
            c.keepFraction = 0.1;
            c.compressed = compressed;
            c.policy = policy;
            c.smallKind = smallKind;
            c.nonBlocking = true;
            compareWithStaged(comm, rank, c);
          }
    return kChildOk;
  });
}

// Every token kept, and none.
TEST(DeviceToken, KeepAllAndNoneN2) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    for (double fraction : {0.0, 1.0})
      for (bool topk : {true, false}) {
        Case c;
        c.topk = topk;
        c.keepFraction = fraction;
        compareWithStaged(comm, rank, c);
      }
    return kChildOk;
  });
}

// Host and managed tensors are the CPU's: nothing copied, no kernel.
// (A residual: test_device_token_residual.cc.)
TEST(DeviceToken, HostAndManagedTensorsAreNotMovedOnTheDevice) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    Case device;
    const Outcome expected = tokenCall(comm, rank, true, device);
    for (int kind : {-1, static_cast<int>(EmuCudaManaged)}) {
      Case host;
      host.buffKind = kind;
      const Outcome got = tokenCall(comm, rank, true, host);
      EXPECT_EQ(got.cost.launches, 0u) << "kind " << kind;
      EXPECT_EQ(got.cost.bytesFromDevice + got.cost.bytesToDevice, 0u) << "kind " << kind;
      EXPECT_TRUE(got.buff == expected.buff) << "kind " << kind;
    }
    return kChildOk;
  });
}

// SPCCL_DEVICE_TOKENS=0 on one rank only: that rank stages, the other
// moves its rows on the device; both get the staged bits.
TEST(DeviceToken, OneRankStagedOneOnTheDeviceAgree) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    for (bool compressed : {false, true}) {
      Case c;
      c.compressed = compressed;
      const Outcome mixed = tokenCall(comm, rank, rank == 0, c);
      const Outcome staged = tokenCall(comm, rank, false, c);
      EXPECT_TRUE(mixed.buff == staged.buff) << "rank " << rank << " compressed " << compressed;
      EXPECT_TRUE(mixed.maskOut == staged.maskOut) << "rank " << rank;
    }
    return kChildOk;
  });
}

// The gather's launch fails on rank 1 (the selection is done, the peers
// are in the rows' all-reduce): rank 1 returns the driver's error naming
// the kernel; rank 0 fails at once naming rank 1, not at the deadline.
TEST(DeviceToken, FailedGatherFailsEveryRankNamingIt) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const DeviceTensor buff(rank, spcclFloat32);
    const std::vector<float> scores = scoresOf(rank);
    if (rank == 1) emuCudaFailLaunches(1);
    const TimedResult got = timedCall(comm, [&] {
      return spcclTokenTopkAllReduce(buff.data(), scores.data(), kTokens, kHidden, spcclFloat32,
                                     spcclSum, kTokens / 2, nullptr, spcclPruneZero, nullptr, comm,
                                     nullptr);
    });
    expectFailedOnEveryRank(rank, 1, got, "kernel spcclGatherRows: cuLaunchKernel");
    return kChildOk;
  });
}

// The same on a stream: the calls return at once; the failure becomes the
// async error of both ranks.
TEST(DeviceToken, FailedGatherOnAStreamIsTheAsyncErrorOfBoth) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const DeviceTensor buff(rank, spcclFloat32);
    const std::vector<unsigned char> mask = maskOf(0.5);
    void* stream = emuCudaStreamCreate();
    if (rank == 1) emuCudaFailLaunches(1);
    EXPECT_EQ(spcclTokenMaskAllReduce(buff.data(), mask.data(), kTokens, kHidden, spcclFloat32,
                                      spcclSum, nullptr, spcclPruneZero, comm, stream),
              spcclSuccess);
    expectAsyncErrorOnEveryRank(comm, rank, 1, stream);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

}  // namespace

namespace {

// The zeroing's launch (the third: gather and scatter passed) fails on
// rank 1 after the rows' all-reduce: rank 1 returns the driver's error
// naming the kernel, having waited for the stream (the pruned rows'
// indices upload queued before it) as often as a call that succeeds.
TEST(DeviceToken, FailedZeroingWaitsForItsUpload) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const DeviceTensor buff(rank, spcclFloat32);
    const std::vector<float> scores = scoresOf(rank);
    setenv("SPCCL_DEVICE_TOKENS", "1", 1);
    auto call = [&] {
      return spcclTokenTopkAllReduce(buff.data(), scores.data(), kTokens, kHidden, spcclFloat32,
                                     spcclSum, kTokens / 2, nullptr, spcclPruneZero, nullptr, comm,
                                     nullptr);
    };
    EmuCudaCounters before = emuCudaCounters();
    EXPECT_EQ(call(), spcclSuccess) << "rank " << rank << ": " << spcclGetLastError(comm);
    const uint64_t syncsWhenWell = emuCudaCounters().streamSyncs - before.streamSyncs;
    if (rank == 1) emuCudaFailLaunchesAfter(2, 1);
    before = emuCudaCounters();
    const spcclResult_t failed = call();
    const uint64_t syncs = emuCudaCounters().streamSyncs - before.streamSyncs;
    if (rank == 1) {
      EXPECT_NE(failed, spcclSuccess);
      EXPECT_NE(std::string(spcclGetLastError(comm)).find("kernel spcclZeroRows: cuLaunchKernel"),
                std::string::npos)
          << spcclGetLastError(comm);
      EXPECT_EQ(syncs, syncsWhenWell) << "the failed zeroing did not wait for its stream";
    }
    unsetenv("SPCCL_DEVICE_TOKENS");
    return kChildOk;
  });
}

}  // namespace

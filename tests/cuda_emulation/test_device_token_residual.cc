// Token all-reduces of device tensors with error feedback (cfg->residual)
// against the emulated driver (core/device_token_call.h): the kept rows
// and their residual rows gathered and scattered on the device by host
// stand-ins of spccl's row kernels (emulated_row_kernels.cc), the codec's
// error feedback on the host on the packed rows, the pruned rows'
// residual never copied. Real ranks (forked processes, real sockets).
// NOT the CUDA kernels, which run only in tests/gpu.
//
// Several consecutive calls share one residual, so each call's error
// feedback feeds the next; after every call the tensor, maskOut and the
// residual are compared bit for bit with the staged path
// (SPCCL_DEVICE_TOKENS=0: tensor and residual staged whole), and the bytes
// the device path copied are counted exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_token_inputs.h"
#include "emulated_ranks.h"
#include "rank_failure.h"
#include "spccl.h"
#include "token_call_forms.h"

using namespace spccl::testing;

namespace {

constexpr int kCalls = 3;
// A mask call's kept fraction per call: the kept count changes between
// calls (the pinned memory is sized from it where the mask can be read
// when the call is made).
constexpr double kMaskFractions[kCalls] = {0.1, 0.6, 0.3};
constexpr double kTopkFraction = 0.25;

// A zeroed [kTokens x kHidden] f32 residual in memory of `kind` and the
// compression (the defaults) that feeds it back.
class ZeroResidual {
 public:
  explicit ZeroResidual(int kind) : buffer_(kTokens * kHidden * sizeof(float), kind) {
    buffer_.set(std::vector<float>(kTokens * kHidden, 0.0f).data());
    cfg_.residual = static_cast<float*>(buffer_.data());
  }
  const spcclCompression* cfg() const { return &cfg_; }
  const Buffer& buffer() const { return buffer_; }

 private:
  Buffer buffer_;
  spcclCompression cfg_ = SPCCL_COMPRESSION_INITIALIZER;
};

struct ResidualCase {
  bool topk = true;
  spcclDataType_t type = spcclFloat32;
  void* stream = nullptr;
  int residualKind = EmuCudaDevice;
  int smallKind = -1;  // where scores, mask and maskOut lie
  spcclPrunePolicy_t policy = spcclPruneZero;
  bool nonBlocking = false;  // spcclItoken...AllReduce, then spcclWait (no stream)
  // The residual on emulated device rank + 1 (runOnThreeDevices: rank r's
  // tensor on device r), not the current one.
  bool residualOnNextDevice = false;

  std::string describe(int rank, int call) const {
    return std::string(topk ? "top-k" : "mask") + " type " + std::to_string(type) +
           (stream != nullptr ? " on a stream" : " on the NULL stream") + " residual kind " +
           std::to_string(residualKind) + " small kind " + std::to_string(smallKind) +
           (policy == spcclPruneZero ? " prune zero" : " keep local") +
           (nonBlocking ? " non-blocking" : "") + " rank " + std::to_string(rank) + " call " +
           std::to_string(call);
  }
  size_t kept(int call) const {
    if (topk) return static_cast<size_t>(kTopkFraction * kTokens);
    size_t kept = 0;
    for (unsigned char m : maskOf(kMaskFractions[call])) kept += m;
    return kept;
  }
};

struct Step {
  std::vector<unsigned char> buff, maskOut, residual;
  uint64_t launches = 0, bytesFromDevice = 0, bytesToDevice = 0;
  uint64_t copiesToDevice = 0, copiesFromDevice = 0, synchronizations = 0;
};

// kCalls consecutive calls with one residual (zero at first), each on its
// own tensor and scores; SPCCL_DEVICE_TOKENS as given.
std::vector<Step> consecutiveCalls(spcclComm_t comm, int rank, bool deviceTokens,
                                   const ResidualCase& c) {
  setenv("SPCCL_DEVICE_TOKENS", deviceTokens ? "1" : "0", 1);
  if (c.residualOnNextDevice) {
    EXPECT_EQ(emuCudaSetCurrentDevice((rank + 1) % 3), 0);
  }
  const ZeroResidual residual(c.residualKind);
  if (c.residualOnNextDevice) {
    EXPECT_EQ(emuCudaSetCurrentDevice(rank), 0);
  }
  std::vector<Step> steps;
  for (int call = 0; call < kCalls; ++call) {
    const int seed = rank + 8 * call;
    const DeviceTensor buff(seed, c.type);
    const TokenSmallArrays small(c.smallKind, seed, kMaskFractions[call]);
    const EmuCudaCounters before = emuCudaCounters();
    const spcclResult_t result = callTokenAllReduce(
        comm, {c.topk, c.nonBlocking, c.stream, c.kept(call), c.type, residual.cfg(), c.policy},
        buff.data(), small);
    EXPECT_EQ(result, spcclSuccess) << c.describe(rank, call) << ": " << spcclGetLastError(comm);
    cuStreamSynchronize(c.stream);
    const EmuCudaCounters now = emuCudaCounters();
    Step step;
    step.launches = now.kernelLaunches - before.kernelLaunches;
    step.bytesFromDevice = now.bytesFromDevice - before.bytesFromDevice;
    step.bytesToDevice = now.bytesToDevice - before.bytesToDevice;
    step.copiesToDevice = now.copiesToDevice - before.copiesToDevice;
    step.copiesFromDevice = now.copiesFromDevice - before.copiesFromDevice;
    step.synchronizations = now.streamSyncs - before.streamSyncs;
    step.buff = buff.get(c.stream);
    if (c.topk) step.maskOut = small.maskOut.get(c.stream);
    step.residual = residual.buffer().get(c.stream);
    steps.push_back(std::move(step));
  }
  unsetenv("SPCCL_DEVICE_TOKENS");
  return steps;
}

// Every call of the device path equals the staged path's bit for bit
// (tensor, maskOut, residual), and copied only the kept rows, their
// residual rows where the residual is device memory, the row indices and
// the small arrays: never the whole residual. Returns the device path's
// steps.
std::vector<Step> compareWithStaged(spcclComm_t comm, int rank, const ResidualCase& c) {
  const std::vector<Step> staged = consecutiveCalls(comm, rank, false, c);
  const std::vector<Step> device = consecutiveCalls(comm, rank, true, c);
  EXPECT_EQ(staged.size(), static_cast<size_t>(kCalls));
  EXPECT_EQ(device.size(), static_cast<size_t>(kCalls));
  if (staged.size() != kCalls || device.size() != kCalls) return {};
  const size_t rowBytes = kHidden * spcclTypeSize(c.type), residualRowBytes = kHidden * 4;
  // A host or managed residual is the CPU's: packed there, never copied.
  const bool residualMoves = c.residualKind == EmuCudaDevice;
  bool feedback = false;  // some residual not zero: error feedback ran
  for (int call = 0; call < kCalls; ++call) {
    const std::string what = c.describe(rank, call);
    const Step &s = staged[call], &d = device[call];
    EXPECT_TRUE(d.buff == s.buff) << what << ": the tensors differ";
    EXPECT_TRUE(d.maskOut == s.maskOut) << what << ": maskOut differs";
    EXPECT_TRUE(d.residual == s.residual) << what << ": the residuals differ";
    for (unsigned char b : s.residual) feedback = feedback || b != 0;
    EXPECT_EQ(s.launches, 0u) << what << ": the staged path launched kernels";
    EXPECT_GE(s.bytesFromDevice, kTokens * (rowBytes + (residualMoves ? residualRowBytes : 0)))
        << what << ": the staged path did not stage the tensor and residual whole";
    const size_t kept = c.kept(call), pruned = kTokens - kept;
    const bool small = c.smallKind == EmuCudaDevice;
    const size_t smallIn = small ? (c.topk ? kTokens * sizeof(float) : kTokens) : 0;
    const size_t smallOut = small && c.topk ? kTokens : 0;
    const bool zeroes = c.policy == spcclPruneZero && pruned > 0;
    const size_t residualIn = residualMoves ? kept * residualRowBytes : 0;
    // The residual's rows go with the tensor's indices: none uploaded for
    // them.
    const size_t residualOut = residualMoves ? kept * residualRowBytes : 0;
    EXPECT_EQ(d.bytesFromDevice, kept * rowBytes + residualIn + smallIn)
        << what << ": not only the kept rows and their residual copied in";
    EXPECT_EQ(d.bytesToDevice,
              kept * (rowBytes + 8) + residualOut + (zeroes ? pruned * 8 : 0) + smallOut)
        << what << ": not only the kept rows and their residual copied out";
    EXPECT_EQ(d.launches, (kept > 0 ? (residualMoves ? 4u : 2u) : 0u) + (zeroes ? 1u : 0u)) << what;
    // Copies: the kept rows' indices (once, for the residual's rows too),
    // the packed rows and residual rows each way, the pruned rows'
    // indices, the small arrays.
    const uint64_t rowCopies = kept > 0 ? (residualMoves ? 2u : 1u) : 0u;
    EXPECT_EQ(d.copiesToDevice,
              (kept > 0 ? 1u : 0u) + rowCopies + (zeroes ? 1u : 0u) + (smallOut > 0 ? 1u : 0u))
        << what << ": not one indices upload for the tensor's and the residual's rows";
    EXPECT_EQ(d.copiesFromDevice, rowCopies + (smallIn > 0 ? 1u : 0u)) << what;
    // On a stream, with the small arrays on the host, the call waits only
    // for the gather (both row sets), the scatter (both) and the zeroing;
    // the test waits once more, for the stream.
    if (c.stream != nullptr && !small) {
      EXPECT_EQ(d.synchronizations, 1u + (kept > 0 ? 2u : 0u) + (zeroes ? 1u : 0u))
          << what << ": not one synchronisation for the tensor's and the residual's rows";
    }
  }
  EXPECT_TRUE(feedback) << c.describe(rank, kCalls - 1) << ": the residual stayed zero";
  return device;
}

// A device residual's rows move with the tensor's (DeviceRows::moveAlso):
// against the same call with a host residual (packed by the CPU), one
// copy more each way (the packed residual rows out and back) where rows
// are kept, and no indices upload nor stream synchronisation more.
void expectResidualRowsRideAlong(const std::vector<Step>& deviceResidual,
                                 const std::vector<Step>& hostResidual, const ResidualCase& c,
                                 int rank) {
  ASSERT_EQ(deviceResidual.size(), hostResidual.size());
  for (size_t call = 0; call < deviceResidual.size(); ++call) {
    const std::string what = c.describe(rank, static_cast<int>(call)) + " against a host residual";
    const Step &d = deviceResidual[call], &h = hostResidual[call];
    const uint64_t moved = c.kept(static_cast<int>(call)) > 0 ? 1 : 0;
    EXPECT_EQ(d.synchronizations, h.synchronizations) << what << ": a synchronisation more";
    EXPECT_EQ(d.copiesToDevice, h.copiesToDevice + moved) << what << ": an upload more";
    EXPECT_EQ(d.copiesFromDevice, h.copiesFromDevice + moved) << what;
  }
}

void everyResidualCase(int n, spcclDataType_t type) {
  runOnRanks(n, [type](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (bool topk : {true, false})
      for (void* s : {static_cast<void*>(nullptr), stream}) {
        // The device residual's steps, by smallKind + 1, for the host
        // residual's case after them.
        std::vector<Step> deviceSteps[2];
        for (int residualKind :
             {static_cast<int>(EmuCudaDevice), -1, static_cast<int>(EmuCudaManaged)})
          for (int smallKind : {-1, static_cast<int>(EmuCudaDevice)}) {
            ResidualCase c;
            c.topk = topk;
            c.type = type;
            c.stream = s;
            c.residualKind = residualKind;
            c.smallKind = smallKind;
            const std::vector<Step> device = compareWithStaged(comm, rank, c);
            if (residualKind == -1) {
              ResidualCase onDevice = c;
              onDevice.residualKind = EmuCudaDevice;
              expectResidualRowsRideAlong(deviceSteps[smallKind + 1], device, onDevice, rank);
            } else if (residualKind == EmuCudaDevice) {
              deviceSteps[smallKind + 1] = device;
            }
          }
      }
    ResidualCase keepLocal;
    keepLocal.topk = false;
    keepLocal.type = type;
    keepLocal.policy = spcclPruneKeepLocal;
    compareWithStaged(comm, rank, keepLocal);
    for (bool topk : {true, false}) {
      ResidualCase nonBlocking;
      nonBlocking.topk = topk;
      nonBlocking.type = type;
      nonBlocking.smallKind = EmuCudaDevice;
      nonBlocking.nonBlocking = true;
      compareWithStaged(comm, rank, nonBlocking);
    }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(DeviceTokenResidual, Float32ConsecutiveCallsN2) { everyResidualCase(2, spcclFloat32); }
TEST(DeviceTokenResidual, Float32ConsecutiveCallsN3) { everyResidualCase(3, spcclFloat32); }
TEST(DeviceTokenResidual, Bfloat16ConsecutiveCallsN2) { everyResidualCase(2, spcclBfloat16); }
TEST(DeviceTokenResidual, Bfloat16ConsecutiveCallsN3) { everyResidualCase(3, spcclBfloat16); }

// A device residual on another device than the tensor's: the row kernels
// have no peer access to it, so the call is staged whole (no launch), with
// the staged path's tensor, maskOut and residual bit for bit.
TEST(DeviceTokenResidual, ResidualOnAnotherDeviceIsStagedN3) {
  runOnThreeDevices(nullptr, [](int rank, spcclComm_t comm, void*) {
    ResidualCase c;
    c.residualOnNextDevice = true;
    const std::vector<Step> staged = consecutiveCalls(comm, rank, false, c);
    const std::vector<Step> device = consecutiveCalls(comm, rank, true, c);
    ASSERT_EQ(device.size(), staged.size());
    for (size_t call = 0; call < device.size(); ++call) {
      const std::string what = c.describe(rank, static_cast<int>(call)) + ", residual elsewhere";
      EXPECT_EQ(device[call].launches, 0u) << what << ": a kernel ran";
      EXPECT_TRUE(device[call].buff == staged[call].buff) << what << ": the tensors differ";
      EXPECT_TRUE(device[call].maskOut == staged[call].maskOut) << what << ": maskOut differs";
      EXPECT_TRUE(device[call].residual == staged[call].residual) << what << ": residuals differ";
    }
  });
}

// The residual's gather (the second launch: the tensor's passed) fails on
// rank 1 while its peers are in the rows' all-reduce: rank 1 returns the
// driver's error naming the residual and the kernel; the others fail at
// once naming rank 1, not at the deadline.
TEST(DeviceTokenResidual, FailedResidualGatherFailsEveryRankNamingIt) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const DeviceTensor buff(rank, spcclFloat32);
    const ZeroResidual residual(EmuCudaDevice);
    const std::vector<float> scores = scoresOf(rank);
    setenv("SPCCL_DEVICE_TOKENS", "1", 1);
    if (rank == 1) emuCudaFailLaunchesAfter(1, 1);
    const TimedResult got = timedCall(comm, [&] {
      return spcclTokenTopkAllReduce(buff.data(), scores.data(), kTokens, kHidden, spcclFloat32,
                                     spcclSum, kTokens / 2, residual.cfg(), spcclPruneZero, nullptr,
                                     comm, nullptr);
    });
    expectFailedOnEveryRank(rank, 1, got, "cfg->residual: kernel spcclGatherRows: cuLaunchKernel");
    return kChildOk;
  });
}

// The same on a stream: the calls return at once; the failure becomes the
// async error of every rank.
TEST(DeviceTokenResidual, FailedResidualGatherOnAStreamIsTheAsyncErrorOfAll) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const DeviceTensor buff(rank, spcclBfloat16);
    const ZeroResidual residual(EmuCudaDevice);
    const std::vector<unsigned char> mask = maskOf(0.5);
    void* stream = emuCudaStreamCreate();
    setenv("SPCCL_DEVICE_TOKENS", "1", 1);
    if (rank == 1) emuCudaFailLaunchesAfter(1, 1);
    EXPECT_EQ(spcclTokenMaskAllReduce(buff.data(), mask.data(), kTokens, kHidden, spcclBfloat16,
                                      spcclSum, residual.cfg(), spcclPruneZero, comm, stream),
              spcclSuccess);
    expectAsyncErrorOnEveryRank(comm, rank, 1, stream);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

}  // namespace

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

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// bytes of emulated memory of `kind` (EmuCudaDevice, EmuCudaManaged) or,
// with kind -1, of the host.
class Buffer {
 public:
  Buffer(size_t bytes, int kind)
      : bytes_(bytes),
        kind_(kind),
        data_(kind < 0 ? std::malloc(std::max<size_t>(bytes, 1))
                       : emuCudaAlloc(std::max<size_t>(bytes, 1), kind)) {}
  ~Buffer() {
    if (kind_ < 0)
      std::free(data_);
    else
      emuCudaFree(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  void set(const void* values) const {
    if (kind_ != EmuCudaDevice) {
      std::memcpy(data_, values, bytes_);
      return;
    }
    cuMemcpyHtoDAsync_v2(reinterpret_cast<uint64_t>(data_), values, bytes_, nullptr);
    cuStreamSynchronize(nullptr);
  }
  std::vector<unsigned char> get(void* stream) const {
    std::vector<unsigned char> out(bytes_);
    cuStreamSynchronize(stream);
    if (kind_ != EmuCudaDevice) {
      std::memcpy(out.data(), data_, bytes_);
      return out;
    }
    cuMemcpyDtoHAsync_v2(out.data(), reinterpret_cast<uint64_t>(data_), bytes_, nullptr);
    cuStreamSynchronize(nullptr);
    return out;
  }

 private:
  size_t bytes_;
  int kind_;
  void* data_;
};

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

constexpr size_t kTokens = 203;  // not a multiple of anything
constexpr size_t kHidden = 40;

// Rank `rank`'s tensor: values whose float sums depend on their order.
std::vector<unsigned char> tensorOf(int rank, spcclDataType_t type) {
  const size_t count = kTokens * kHidden, size = spcclTypeSize(type);
  std::vector<unsigned char> bytes(count * size);
  for (size_t i = 0; i < count; ++i) {
    const float f = static_cast<float>(mix(i * 7 + rank) % 20001) / 64.0f - 156.3f;
    if (type == spcclFloat32) {
      std::memcpy(&bytes[i * 4], &f, 4);
    } else {
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      const auto b = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[i * 2], &b, 2);
    }
  }
  return bytes;
}

// Rank `rank`'s scores (ties included: a few values only).
std::vector<float> scoresOf(int rank) {
  std::vector<float> scores(kTokens);
  for (size_t t = 0; t < kTokens; ++t) scores[t] = static_cast<float>(mix(t * 31 + rank) % 50);
  return scores;
}

// The same mask on every rank: about `fraction` of the tokens kept.
std::vector<unsigned char> maskOf(double fraction) {
  std::vector<unsigned char> mask(kTokens);
  for (size_t t = 0; t < kTokens; ++t)
    mask[t] = mix(t + 99) % 1000 < static_cast<uint64_t>(fraction * 1000) ? 1 : 0;
  return mask;
}

struct Case {
  bool topk = true;
  double keepFraction = 0.5;
  bool compressed = false;
  bool residual = false;  // compressed with error feedback
  spcclPrunePolicy_t policy = spcclPruneZero;
  void* stream = nullptr;
  int smallKind = -1;  // where scores, mask and maskOut lie
  int buffKind = EmuCudaDevice;
  spcclDataType_t type = spcclFloat32;
  bool nonBlocking = false;  // spcclItoken...AllReduce, then spcclWait (no stream)

  size_t keep() const { return static_cast<size_t>(keepFraction * kTokens); }
  std::string describe(int rank) const {
    return std::string(topk ? "top-k" : "mask") + " keep " + std::to_string(keepFraction) +
           (compressed ? " compressed" : " dense") + (residual ? " with residual" : "") +
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
  const std::vector<float> scores = scoresOf(rank);
  const std::vector<unsigned char> mask = maskOf(c.keepFraction);
  Buffer scoresBuffer(kTokens * sizeof(float), c.smallKind), maskBuffer(kTokens, c.smallKind),
      maskOut(kTokens, c.smallKind);
  scoresBuffer.set(scores.data());
  maskBuffer.set(mask.data());
  std::vector<float> residual(kTokens * kHidden, 0.0f);
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  if (c.residual) cfg.residual = residual.data();
  const spcclCompression* config = c.compressed ? &cfg : nullptr;
  const EmuCudaCounters before = emuCudaCounters();
  Outcome out;
  const auto* scoresIn = static_cast<const float*>(scoresBuffer.data());
  const auto* maskIn = static_cast<const unsigned char*>(maskBuffer.data());
  auto* maskOutput = static_cast<unsigned char*>(maskOut.data());
  if (c.nonBlocking) {
    spcclRequest_t request = nullptr;
    out.result =
        c.topk ? spcclItokenTopkAllReduce(buff.data(), scoresIn, kTokens, kHidden, c.type, spcclSum,
                                          c.keep(), config, c.policy, maskOutput, comm, &request)
               : spcclItokenMaskAllReduce(buff.data(), maskIn, kTokens, kHidden, c.type, spcclSum,
                                          config, c.policy, comm, &request);
    if (out.result == spcclSuccess) out.result = spcclWait(request);
  } else {
    out.result =
        c.topk ? spcclTokenTopkAllReduce(buff.data(), scoresIn, kTokens, kHidden, c.type, spcclSum,
                                         c.keep(), config, c.policy, maskOutput, comm, c.stream)
               : spcclTokenMaskAllReduce(buff.data(), maskIn, kTokens, kHidden, c.type, spcclSum,
                                         config, c.policy, comm, c.stream);
  }
  EXPECT_EQ(out.result, spcclSuccess) << c.describe(rank) << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(c.stream);
  const EmuCudaCounters now = emuCudaCounters();
  out.cost = {now.kernelLaunches - before.kernelLaunches,
              now.bytesFromDevice - before.bytesFromDevice,
              now.bytesToDevice - before.bytesToDevice};
  out.buff = buff.get(c.stream);
  if (c.topk) out.maskOut = maskOut.get(c.stream);
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

// A residual (error feedback) stays staged: no kernel, the whole tensor
// copied; host and managed tensors are the CPU's: nothing copied.
TEST(DeviceToken, ResidualHostAndManagedAreNotMovedOnTheDevice) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    Case c;
    c.compressed = true;
    c.residual = true;
    const Outcome staged = tokenCall(comm, rank, true, c);
    EXPECT_EQ(staged.cost.launches, 0u);
    EXPECT_GE(staged.cost.bytesFromDevice, kTokens * kHidden * 4);
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
    const std::vector<unsigned char> input = tensorOf(rank, spcclFloat32);
    Buffer buff(input.size(), EmuCudaDevice);
    buff.set(input.data());
    const std::vector<float> scores = scoresOf(rank);
    if (rank == 1) emuCudaFailLaunches(1);
    const auto start = std::chrono::steady_clock::now();
    const spcclResult_t result = spcclTokenTopkAllReduce(
        buff.data(), scores.data(), kTokens, kHidden, spcclFloat32, spcclSum, kTokens / 2, nullptr,
        spcclPruneZero, nullptr, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = spcclGetLastError(comm);
    EXPECT_NE(result, spcclSuccess) << "rank " << rank;
    if (rank == 1) {
      EXPECT_EQ(result, spcclSystemError);
      EXPECT_NE(error.find("kernel spcclGatherRows: cuLaunchKernel"), std::string::npos) << error;
    } else {
      EXPECT_NE(error.find("rank 1"), std::string::npos) << error;
    }
    // The communicator's deadline is 20 s (initRank).
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": " << error;
    return kChildOk;
  });
}

// The same on a stream: the calls return at once; the failure becomes the
// async error of both ranks.
TEST(DeviceToken, FailedGatherOnAStreamIsTheAsyncErrorOfBoth) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const std::vector<unsigned char> input = tensorOf(rank, spcclFloat32);
    Buffer buff(input.size(), EmuCudaDevice);
    buff.set(input.data());
    const std::vector<unsigned char> mask = maskOf(0.5);
    void* stream = emuCudaStreamCreate();
    if (rank == 1) emuCudaFailLaunches(1);
    EXPECT_EQ(spcclTokenMaskAllReduce(buff.data(), mask.data(), kTokens, kHidden, spcclFloat32,
                                      spcclSum, nullptr, spcclPruneZero, comm, stream),
              spcclSuccess);
    cuStreamSynchronize(stream);
    spcclResult_t async = spcclSuccess;
    EXPECT_EQ(spcclCommGetAsyncError(comm, &async), spcclSuccess);
    EXPECT_NE(async, spcclSuccess) << "rank " << rank;
    if (rank == 1) {
      EXPECT_EQ(async, spcclSystemError);
    }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

}  // namespace

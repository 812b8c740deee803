// spcclCompressedAllReduce of device buffers with the codecs on the device
// (core/device_compressed_call.h) against the emulated driver: real ranks
// (forked processes, real sockets), emulated device memory, and
// cuLaunchKernel running HOST stand-ins of spccl's encode and decode
// kernels with the same element code as the .cu file
// (emulated_codec_kernels.cc). This
// proves the call's schedule, what it copies and its errors; NOT the CUDA
// kernel, which runs only in tests/gpu.
//
// Every output is compared bit for bit with the staged path
// (SPCCL_DEVICE_CODECS=0: input and output through pinned memory) on the
// same inputs, and the bytes copied each way are bounded: to the host the
// owned chunk in f32 and the codes of the rest, to the device the codes: a
// call that copied the f32 input or output whole fails the test.
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

constexpr size_t kCount = 10007;  // not a multiple of anything
constexpr size_t kBlock = 64;
// Small pieces (SPCCL_COMPRESS_PIECE_BYTES, set before the ranks start;
// its least, job_settings.cc): each chunk is cut into several (4 or 5 of
// 1024 elements), encoded and decoded one at a time.
constexpr const char* kPieceBytes = "4096";
constexpr size_t kPieceLength = 1024;  // a multiple of lcm(8, kBlock)
constexpr size_t kMaxPieces = 32;      // compress/chunk_pieces.h, per chunk

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Rank `rank`'s input: values whose float sums depend on their order.
std::vector<float> inputOf(int rank) {
  std::vector<float> v(kCount);
  for (size_t i = 0; i < kCount; ++i)
    v[i] = static_cast<float>(mix(i * 7 + rank) % 20001) / 64.0f - 156.3f;
  return v;
}

struct Case {
  int bits = 4;
  spcclCodec_t codec = spcclCodecPiecewise;
  spcclRedOp_t op = spcclSum;
  void* stream = nullptr;
  bool inPlace = false;
  bool nonBlocking = false;  // spcclIcompressedAllReduce, then spcclWait

  std::string describe(int rank) const {
    return std::to_string(bits) + "-bit " + (codec == spcclCodecLinear ? "linear" : "piecewise") +
           (op == spcclAvg ? " avg" : " sum") + (stream ? " on a stream" : " NULL stream") +
           (inPlace ? " in place" : "") + (nonBlocking ? " non-blocking" : "") + " rank " +
           std::to_string(rank);
  }
};

struct Outcome {
  std::vector<float> out;
  uint64_t launches = 0, bytesFromDevice = 0, bytesToDevice = 0;
};

// One call with SPCCL_DEVICE_CODECS as given.
Outcome compressedCall(spcclComm_t comm, int rank, bool deviceCodecs, const Case& c) {
  setenv("SPCCL_DEVICE_CODECS", deviceCodecs ? "1" : "0", 1);
  DeviceFloats send(kCount, nullptr, inputOf(rank)), recv(kCount, nullptr);
  cuStreamSynchronize(nullptr);
  float* out = c.inPlace ? send.data : recv.data;
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.bits = c.bits;
  cfg.codec = c.codec;
  cfg.blockSize = kBlock;
  const EmuCudaCounters before = emuCudaCounters();
  spcclResult_t result = spcclSuccess;
  if (c.nonBlocking) {
    spcclRequest_t request = nullptr;
    result =
        spcclIcompressedAllReduce(send.data, out, kCount, spcclFloat32, c.op, &cfg, comm, &request);
    if (result == spcclSuccess) result = spcclWait(request);
  } else {
    result =
        spcclCompressedAllReduce(send.data, out, kCount, spcclFloat32, c.op, &cfg, comm, c.stream);
  }
  EXPECT_EQ(result, spcclSuccess) << c.describe(rank) << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(c.stream);
  const EmuCudaCounters now = emuCudaCounters();
  Outcome o;
  o.launches = now.kernelLaunches - before.kernelLaunches;
  o.bytesFromDevice = now.bytesFromDevice - before.bytesFromDevice;
  o.bytesToDevice = now.bytesToDevice - before.bytesToDevice;
  o.out = (c.inPlace ? send : recv).download(nullptr);
  unsetenv("SPCCL_DEVICE_CODECS");
  return o;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The device path's output equals the staged path's bit for bit; it copied
// to the host the owned chunk (whole blocks, at most count/n + a block) in
// f32 plus codes, and to the device only codes (scales and packed codes,
// one set of scales a piece at most).
void compareWithStaged(spcclComm_t comm, int rank, int n, const Case& c) {
  const std::string what = c.describe(rank);
  const Outcome staged = compressedCall(comm, rank, false, c);
  const Outcome device = compressedCall(comm, rank, true, c);
  EXPECT_EQ(staged.launches, 0u) << what << ": the staged path launched kernels";
  EXPECT_GE(staged.bytesFromDevice, kCount * sizeof(float)) << what;
  EXPECT_GE(staged.bytesToDevice, kCount * sizeof(float)) << what;
  EXPECT_TRUE(sameBits(device.out, staged.out)) << what << ": the outputs differ";
  const size_t pieces = static_cast<size_t>(n) * kMaxPieces;
  const size_t codes = (kCount * static_cast<size_t>(c.bits) + 7) / 8 + pieces;
  const size_t scales = (kCount / kBlock + pieces) * sizeof(float);
  const size_t owned = (kCount / static_cast<size_t>(n) + kBlock) * sizeof(float);
  EXPECT_GT(device.bytesFromDevice, 0u) << what;
  EXPECT_LE(device.bytesFromDevice, owned + codes + scales)
      << what << ": more than the owned chunk and codes copied in";
  EXPECT_GT(device.bytesToDevice, 0u) << what;
  EXPECT_LE(device.bytesToDevice, codes + scales) << what << ": more than the codes copied out";
  EXPECT_GE(device.launches, static_cast<uint64_t>(n)) << what << ": one decode a piece at least";
}

class DeviceCompressed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("SPCCL_COMPRESS_PIECE_BYTES", kPieceBytes, 1); }
  static void TearDownTestSuite() { unsetenv("SPCCL_COMPRESS_PIECE_BYTES"); }
};

void everyCase(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (int bits : {2, 4, 8})
      for (spcclCodec_t codec : {spcclCodecPiecewise, spcclCodecLinear})
        for (spcclRedOp_t op : {spcclSum, spcclAvg})
          for (void* s : {static_cast<void*>(nullptr), stream})
            for (bool inPlace : {false, true}) {
              Case c;
              c.bits = bits;
              c.codec = codec;
              c.op = op;
              c.stream = s;
              c.inPlace = inPlace;
              compareWithStaged(comm, rank, n, c);
            }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST_F(DeviceCompressed, EveryCaseN2) { everyCase(2); }
TEST_F(DeviceCompressed, EveryCaseN3) { everyCase(3); }

TEST_F(DeviceCompressed, NonBlockingFormN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (bool inPlace : {false, true}) {
      Case c;
      c.nonBlocking = true;
      c.inPlace = inPlace;
      compareWithStaged(comm, rank, 3, c);
    }
    return kChildOk;
  });
}

// SPCCL_DEVICE_CODECS=0 on one rank only: that rank stages, the other
// decodes on the device; both get the staged bits.
TEST_F(DeviceCompressed, OneRankStagedOneOnTheDeviceAgree) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const Case c;
    const Outcome mixed = compressedCall(comm, rank, rank == 0, c);
    const Outcome staged = compressedCall(comm, rank, false, c);
    EXPECT_TRUE(sameBits(mixed.out, staged.out)) << "rank " << rank;
    return kChildOk;
  });
}

// A residual (error feedback) stays staged: no kernel, the output copied
// back whole.
TEST_F(DeviceCompressed, ResidualStaysStaged) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    DeviceFloats send(kCount, nullptr, inputOf(rank)), recv(kCount, nullptr);
    cuStreamSynchronize(nullptr);
    std::vector<float> residual(kCount, 0.0f);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.residual = residual.data();
    const EmuCudaCounters before = emuCudaCounters();
    EXPECT_EQ(spcclCompressedAllReduce(send.data, recv.data, kCount, spcclFloat32, spcclSum, &cfg,
                                       comm, nullptr),
              spcclSuccess)
        << spcclGetLastError(comm);
    const EmuCudaCounters now = emuCudaCounters();
    EXPECT_EQ(now.kernelLaunches - before.kernelLaunches, 0u);
    EXPECT_GE(now.bytesToDevice - before.bytesToDevice, kCount * sizeof(float));
    return kChildOk;
  });
}

// Launch `skip` + 1 on rank 1 fails (0: the first encode, inside the
// reduce-scatter; past the encodes: a decode, inside the all-gather; its
// peer waits for its chunk or pieces either way): rank 1 returns the
// driver's error naming the kernel; rank 0 fails at once naming rank 1,
// not at the deadline.
void failedLaunchFailsEveryRank(int skip, const char* kernel) {
  runOnRanks(2, [skip, kernel](int rank, spcclComm_t comm) {
    DeviceFloats send(kCount, nullptr, inputOf(rank)), recv(kCount, nullptr);
    cuStreamSynchronize(nullptr);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.blockSize = kBlock;
    if (rank == 1) emuCudaFailLaunchesAfter(static_cast<uint64_t>(skip), 1);
    const auto start = std::chrono::steady_clock::now();
    const spcclResult_t result = spcclCompressedAllReduce(
        send.data, recv.data, kCount, spcclFloat32, spcclSum, &cfg, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = spcclGetLastError(comm);
    EXPECT_NE(result, spcclSuccess) << "rank " << rank;
    if (rank == 1) {
      EXPECT_EQ(result, spcclSystemError);
      EXPECT_NE(error.find(std::string("kernel ") + kernel + ": cuLaunchKernel"), std::string::npos)
          << error;
    } else {
      EXPECT_NE(error.find("rank 1"), std::string::npos) << error;
    }
    // The communicator's deadline is 20 s (initRank).
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": " << error;
    return kChildOk;
  });
}

TEST_F(DeviceCompressed, FailedEncodeFailsEveryRankNamingIt) {
  failedLaunchFailsEveryRank(0, "spcclEncodeScalesF32");
}

// Rank 1 of 2 encodes rank 0's chunk in pieces of two launches each
// (scales, codes) before its first decode: 2 x pieces launches.
TEST_F(DeviceCompressed, FailedDecodeFailsEveryRankNamingIt) {
  const size_t chunk = (kCount / 2 + kBlock - 1) / kBlock * kBlock;  // rank 0's, whole blocks
  failedLaunchFailsEveryRank(static_cast<int>(2 * ((chunk + kPieceLength - 1) / kPieceLength)),
                             "spcclDecodeCodesF32");
}

}  // namespace

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
// same inputs, and the bytes copied each way are bounded: either schedule
// copies codes only, to the host every chunk's once (n encodings), to the
// device 2(n - 1) chunks' (the two-shot: the peers' codes of the owned
// chunk and the all-gathered chunks; the ring: the partial sums and the
// all-gather). A call that copied the input, the output or the residual
// whole, the owned chunk in its type, its f32 sum, or the owned sum's
// codes back to the device fails the test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "device_compressed_calls.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;
using namespace spccl::testing::compressed;

namespace {

// Every combination of the given element types and widths with both
// codecs, sum and avg, a stream and the NULL stream, in place and not.
void everyCase(int n, std::initializer_list<spcclDataType_t> types,
               std::initializer_list<int> widths,
               spcclCompressSchedule_t schedule = spcclCompressTwoShot) {
  runOnRanks(n, [n, types, widths, schedule](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (spcclDataType_t type : types)
      for (int bits : widths)
        for (spcclCodec_t codec : {spcclCodecPiecewise, spcclCodecLinear})
          for (spcclRedOp_t op : {spcclSum, spcclAvg})
            for (void* s : {static_cast<void*>(nullptr), stream})
              for (bool inPlace : {false, true}) {
                const Case c{.type = type,
                             .bits = bits,
                             .codec = codec,
                             .op = op,
                             .stream = s,
                             .inPlace = inPlace,
                             .schedule = schedule};
                compareWithStaged(comm, rank, n, c);
              }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST_F(DeviceCompressed, EveryCaseN2) { everyCase(2, {spcclFloat32}, {2, 4, 8}); }
TEST_F(DeviceCompressed, EveryCaseN3) { everyCase(3, {spcclFloat32}, {2, 4, 8}); }

// f16 and bf16 buffers: read and written in their type on the device, the
// owned chunk copied in its type (one piece: chunk_pieces.h).
TEST_F(DeviceCompressed, HalfTypesN2) { everyCase(2, {spcclFloat16, spcclBfloat16}, {2, 5, 8}); }
TEST_F(DeviceCompressed, HalfTypesN3) { everyCase(3, {spcclFloat16, spcclBfloat16}, {2, 5, 8}); }

// The ring schedule: each step's partial sum decoded, added to the input
// chunk and re-encoded on the device; f32 and bf16 (f16 as bf16's path).
TEST_F(DeviceCompressed, RingN2) {
  everyCase(2, {spcclFloat32, spcclBfloat16}, {2, 4, 8}, spcclCompressRing);
}
TEST_F(DeviceCompressed, RingN3) {
  everyCase(3, {spcclFloat32, spcclBfloat16}, {2, 4, 8}, spcclCompressRing);
}
TEST_F(DeviceCompressed, RingF16N3) { everyCase(3, {spcclFloat16}, {5}, spcclCompressRing); }
// Alone: the whole input is the owned sum (accumulated without codes).
TEST_F(DeviceCompressed, RingN1) {
  everyCase(1, {spcclFloat32, spcclBfloat16}, {4}, spcclCompressRing);
}

TEST_F(DeviceCompressed, NonBlockingFormN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (spcclCompressSchedule_t schedule : {spcclCompressTwoShot, spcclCompressRing})
      for (bool inPlace : {false, true}) {
        Case c;
        c.nonBlocking = true;
        c.inPlace = inPlace;
        c.schedule = schedule;
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

// Error feedback with the residual in device memory: consecutive calls on
// the device path and on the staged path, each path with its own residual
// (alike at the start, not zero); every call's output and the residuals
// after the last are bit-equal, and the device path never copies the
// residual (count f32) either way: it is updated where it lies.
void residualOnDevice(int n, spcclCompressSchedule_t schedule = spcclCompressTwoShot) {
  runOnRanks(n, [n, schedule](int rank, spcclComm_t comm) {
    std::vector<float> start(kCount);
    for (size_t i = 0; i < kCount; ++i)
      start[i] = static_cast<float>(static_cast<int>(mix64(i + 99 * rank) % 201) - 100) / 1024.0f;
    std::vector<Case> cases;
    for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16})
      for (spcclRedOp_t op : {spcclSum, spcclAvg}) {
        Case c;
        c.type = type;
        c.op = op;
        c.schedule = schedule;
        cases.push_back(c);
      }
    Case linearInPlace;
    linearInPlace.schedule = schedule;
    linearInPlace.codec = spcclCodecLinear;
    linearInPlace.bits = 3;
    linearInPlace.inPlace = true;
    cases.push_back(linearInPlace);
    for (const Case& c : cases) {
      const std::string what = c.describe(rank) + " with a device residual";
      DeviceBytes stagedResidual(kCount * sizeof(float)), deviceResidual(kCount * sizeof(float));
      stagedResidual.upload(start.data());
      deviceResidual.upload(start.data());
      for (int call = 0; call < 3; ++call) {
        const Outcome staged =
            compressedCall(comm, rank, false, c, static_cast<float*>(stagedResidual.data));
        const Outcome device =
            compressedCall(comm, rank, true, c, static_cast<float*>(deviceResidual.data));
        const std::string nth = what + ", call " + std::to_string(call);
        EXPECT_TRUE(sameBits(device.out, staged.out)) << nth << ": the outputs differ";
        expectOnlyCodesCopied(device, n, c, nth);
        EXPECT_LT(device.bytesFromDevice, kCount * sizeof(float))
            << nth << ": the residual came in";
        EXPECT_LT(device.bytesToDevice, kCount * sizeof(float)) << nth << ": the residual went out";
      }
      const std::vector<unsigned char> residual = deviceResidual.download();
      EXPECT_TRUE(sameBits(residual, stagedResidual.download()))
          << what << ": the residuals differ after 3 calls";
      EXPECT_NE(std::memcmp(residual.data(), start.data(), residual.size()), 0)
          << what << ": the residual was not updated";
    }
    return kChildOk;
  });
}

TEST_F(DeviceCompressed, DeviceResidualN2) { residualOnDevice(2); }
TEST_F(DeviceCompressed, DeviceResidualN3) { residualOnDevice(3); }
// The ring's every encode (input chunk, partial sums, owned sum) updates
// the device residual where it lies.
TEST_F(DeviceCompressed, RingDeviceResidualN2) { residualOnDevice(2, spcclCompressRing); }
TEST_F(DeviceCompressed, RingDeviceResidualN3) { residualOnDevice(3, spcclCompressRing); }

// A residual in device memory of another device than the buffers' (rank
// r's buffers on emulated device r, its residual on r + 1): the codec
// kernels have no peer access to it, so the call is staged (no kernel),
// with the staged path's output and residual bit for bit.
TEST_F(DeviceCompressed, ResidualOnAnotherDeviceStagesTheCallN3) {
  runOnThreeDevices(nullptr, [](int rank, spcclComm_t comm, void*) {
    std::vector<float> start(kCount, 1.0f / 64);
    DeviceBytes stagedResidual(kCount * sizeof(float));
    ASSERT_EQ(emuCudaSetCurrentDevice((rank + 1) % 3), 0);
    DeviceBytes elsewhere(kCount * sizeof(float));
    ASSERT_EQ(emuCudaSetCurrentDevice(rank), 0);
    stagedResidual.upload(start.data());
    elsewhere.upload(start.data());
    const Case c;
    const Outcome staged =
        compressedCall(comm, rank, false, c, static_cast<float*>(stagedResidual.data));
    const Outcome other = compressedCall(comm, rank, true, c, static_cast<float*>(elsewhere.data));
    EXPECT_EQ(other.launches, 0u) << c.describe(rank) << ": a kernel ran";
    EXPECT_TRUE(sameBits(other.out, staged.out)) << c.describe(rank) << ": the outputs differ";
    EXPECT_TRUE(sameBits(elsewhere.download(), stagedResidual.download()))
        << c.describe(rank) << ": the residuals differ";
  });
}

// A residual in host memory with device buffers stages the call whole (a
// residual copied in and out would cross as much as the staged input and
// output): no kernel, the output copied back whole.
TEST_F(DeviceCompressed, HostResidualStagesTheCall) {
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

// On 3 ranks every chunk (53, 52, 52 blocks: 3392, 3328, 3287 elements)
// is 4 pieces of 1024, each encoded with 2 launches (scales, codes) and a
// copy to the host. Rank 0 lets its first `passing` copies to the host
// pass and holds the rest until it has seen `wanted` launches (or 5 s)
// and 50 ms more: the launches then must be exactly `wanted`, and the
// output is still the staged path's bit for bit once the copies pass
// (nothing was sent or summed from a held copy).
void launchesWhileCopiesHeld(uint64_t passing, uint64_t wanted) {
  runOnRanks(3, [passing, wanted](int rank, spcclComm_t comm) {
    const Case c;
    const Outcome staged = compressedCall(comm, rank, false, c);
    setenv("SPCCL_DEVICE_CODECS", "1", 1);
    DeviceBytes send(kCount * sizeof(float)), recv(kCount * sizeof(float));
    send.upload(inputBytesOf(rank, c.type).data());
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.blockSize = kBlock;
    const uint64_t before = emuCudaCounters().kernelLaunches;
    uint64_t launchedWhileHeld = 0;
    std::thread watcher;
    if (rank == 0) {
      emuCudaCloseCopyGate(passing);
      watcher = std::thread([before, wanted, &launchedWhileHeld] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (emuCudaCounters().kernelLaunches - before < wanted &&
               std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        // Long enough for a schedule that went on past the held copies
        // to launch more.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        launchedWhileHeld = emuCudaCounters().kernelLaunches - before;
        emuCudaOpenCopyGate();
      });
    }
    EXPECT_EQ(spcclCompressedAllReduce(send.data, recv.data, kCount, spcclFloat32, spcclSum, &cfg,
                                       comm, nullptr),
              spcclSuccess)
        << "rank " << rank << ": " << spcclGetLastError(comm);
    if (watcher.joinable()) {
      watcher.join();
      EXPECT_EQ(launchedWhileHeld, wanted) << "kernels launched while copies were held";
    }
    EXPECT_TRUE(sameBits(recv.download(), staged.out)) << "rank " << rank << ": outputs differ";
    unsetenv("SPCCL_DEVICE_CODECS");
    return kChildOk;
  });
}

constexpr uint64_t kPiecesAChunkN3 = 4;

// The reduce-scatter queues the next chunk on the device before it sends
// this one: with the second chunk's copies held, its launches are queued
// too (16; a schedule that waited for each piece stops at 10) and nothing
// more.
TEST_F(DeviceCompressed, NextChunkQueuedWhileThisOneIsSent) {
  launchesWhileCopiesHeld(kPiecesAChunkN3, 2 * 2 * kPiecesAChunkN3);
}

// Both chunks' encodings pass, the first owned piece's encoding is held:
// that piece's sum is formed on the device (one accumulate a peer, 2) and
// encoded (2), and nothing is sent or decoded before its encoding is on
// the host: 16 + 4 launches, not one more.
TEST_F(DeviceCompressed, OwnedPieceSentOnlyOnceItsEncodingIsOnTheHost) {
  launchesWhileCopiesHeld(2 * kPiecesAChunkN3, 2 * 2 * kPiecesAChunkN3 + 2 + 2);
}

// The owned sum copies the peers' codes of each owned piece to the device
// once, from pinned memory (queued: a copy from pageable memory would be
// staged by the driver and waited for), and waits once a piece, for its
// encoding to be sent. On 3 ranks every chunk is kPiecesAChunkN3 pieces:
// to the device go the owned pieces' peers' codes (one pinned copy a
// piece) and the all-gathered pieces (2 x 4, from the host's receive
// buffer: pageable). The codecs synchronise their stream once a peer's
// chunk in the reduce-scatter, once after it, once an owned piece and
// once for the output: 2 + 1 + 4 + 1; besides, compressedCall waits for
// the call's stream, and the NULL stream's call first waits for the
// legacy stream's earlier work (StagedCall::runDirect). A wait a piece
// more, or the peers' codes copied from pageable memory again, fails it.
TEST_F(DeviceCompressed, OwnedSumCopiesFromPinnedMemoryAndWaitsOnceAPieceN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (void* s : {static_cast<void*>(nullptr), stream}) {
      const Case c{.stream = s};
      const Outcome device = compressedCall(comm, rank, true, c);
      const uint64_t gathered = 2 * kPiecesAChunkN3;
      EXPECT_EQ(device.copiesToDeviceFromPageable, gathered) << c.describe(rank);
      EXPECT_EQ(device.copiesToDevice - device.copiesToDeviceFromPageable, kPiecesAChunkN3)
          << c.describe(rank) << ": the owned pieces' peers' codes, one pinned copy each";
      const uint64_t outsideTheCodecs = s == nullptr ? 2 : 1;
      EXPECT_EQ(device.streamSyncs, 2 + 1 + kPiecesAChunkN3 + 1 + outsideTheCodecs)
          << c.describe(rank);
    }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

// Launch `skip` + 1 on rank 1 fails (0: the first encode, inside the
// reduce-scatter; past the encodes: a decode, inside the all-gather; its
// peer waits for its chunk or pieces either way): rank 1 returns the
// driver's error naming the kernel; rank 0 fails at once naming rank 1,
// not at the deadline.
void failedLaunchFailsEveryRank(int skip, const char* kernel,
                                spcclCompressSchedule_t schedule = spcclCompressTwoShot) {
  runOnRanks(2, [skip, kernel, schedule](int rank, spcclComm_t comm) {
    DeviceFloats send(kCount, nullptr, inputOf(rank)), recv(kCount, nullptr);
    cuStreamSynchronize(nullptr);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    cfg.blockSize = kBlock;
    cfg.schedule = schedule;
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
  failedLaunchFailsEveryRank(0, "spcclEncodeScales");
}

// Rank 1 of 2 encodes rank 0's chunk in pieces of two launches each
// (scales, codes): 2 x pieces launches; then its first owned piece's sum
// (rank 0's codes accumulated onto the input: one launch, inside the
// all-gather), encoded (2) and decoded.
constexpr int kEncodeLaunchesOfRankZerosChunk = static_cast<int>(
    2 * (((kCount / 2 + kBlock - 1) / kBlock * kBlock + kPieceLength - 1) / kPieceLength));
TEST_F(DeviceCompressed, FailedOwnedSumFailsEveryRankNamingIt) {
  failedLaunchFailsEveryRank(kEncodeLaunchesOfRankZerosChunk, "spcclAccumulateCodes");
}
TEST_F(DeviceCompressed, FailedDecodeFailsEveryRankNamingIt) {
  failedLaunchFailsEveryRank(kEncodeLaunchesOfRankZerosChunk + 3, "spcclDecodeCodes");
}

// The ring on 2 ranks: rank 1 encodes its input chunk (2 launches), then
// the partial sum that arrives is accumulated (launch 3: the ring's step);
// rank 0 waits for rank 1's owned codes in the all-gather.
TEST_F(DeviceCompressed, FailedRingAccumulateFailsEveryRankNamingIt) {
  failedLaunchFailsEveryRank(2, "spcclAccumulateCodes", spcclCompressRing);
}

}  // namespace

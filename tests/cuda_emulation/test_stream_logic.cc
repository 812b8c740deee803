// spccl's stream-ordered calls and device staging (src/core/staged_call.h)
// against the emulated CUDA driver (emulated_driver.cc): real ranks (forked
// processes over real sockets), emulated device memory and streams. These
// test the ordering and bookkeeping logic in CI; tests/gpu runs the same
// paths on a real GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// A stand-in for a kernel that writes the input late: it waits until the
// test opens its gate (at most 5 s; no gate: 30 ms), then fills. If spccl
// read the input before the stream reached the call, the result would hold
// the old values; if the call waited for the stream, it would return only
// after the gate's time ran out, with `written` already set.
struct LateWrite {
  float* target;
  std::vector<float> values;
  std::atomic<bool>* gate = nullptr;
  std::atomic<bool> written{false};
};
void lateWrite(void* arg) {
  auto* w = static_cast<LateWrite*>(arg);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  if (w->gate == nullptr)
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  else
    while (!w->gate->load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::memcpy(w->target, w->values.data(), w->values.size() * sizeof(float));
  w->written = true;
}

TEST(StreamLogic, CallWaitsForTheStreamAndTheStreamForTheCall) {
  for (int n : {2, 3}) {
    runOnRanks(n, [n](int rank, spcclComm_t comm) {
      const size_t count = 4099;
      void* stream = emuCudaStreamCreate();
      DeviceFloats send(count, stream, std::vector<float>(count, -1.0f)), recv(count, stream);
      // Enqueued before the call: writes the real input once the gate opens,
      // which happens only after the call has returned.
      std::atomic<bool> gate{false};
      LateWrite late{send.data, rankValues(rank, count), &gate};
      emuCudaLaunch(stream, &lateWrite, &late);
      EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, stream),
                spcclSuccess);
      EXPECT_FALSE(late.written) << "the call waited for the stream instead of enqueueing";
      gate = true;
      // Enqueued after the call: must not change what the call read.
      LateWrite clobber{send.data, std::vector<float>(count, 7.0f)};
      emuCudaLaunch(stream, &lateWrite, &clobber);
      const std::vector<float> out = recv.download(stream);
      for (size_t i = 0; i < count; ++i)
        if (out[i] != sumOverRanks(n, i)) {
          ADD_FAILURE() << "rank " << rank << " element " << i << ": " << out[i];
          break;
        }
      emuCudaStreamDestroy(stream);
      return kChildOk;
    });
  }
}

TEST(StreamLogic, ManyCallsQueuedThenOneSync) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const size_t count = 1000;
    void* stream = emuCudaStreamCreate();
    DeviceFloats buffer(count, stream, std::vector<float>(count, static_cast<float>(rank + 1)));
    // In place, 20 times: x -> 6x (1 + 2 + 3 = 6 on the first call, then
    // every rank holds the same value and each call multiplies by 3).
    for (int call = 0; call < 20; ++call)
      EXPECT_EQ(
          spcclAllReduce(buffer.data, buffer.data, count, spcclFloat32, spcclSum, comm, stream),
          spcclSuccess);
    const std::vector<float> out = buffer.download(stream);
    const float expected = 6.0f * std::pow(3.0f, 19.0f);
    EXPECT_EQ(out[0], expected);
    EXPECT_EQ(out[count - 1], expected);
    // A call holds one pinned buffer until the stream passes its copies
    // out, so at most twenty are held at once (fewer where the stream had
    // already returned some before the last calls were queued).
    EXPECT_LE(emuCudaCounters().pinnedAllocations, 20u);
    buffer.upload(std::vector<float>(count, 1.0f), stream);
    for (int call = 0; call < 20; ++call)
      EXPECT_EQ(
          spcclAllReduce(buffer.data, buffer.data, count, spcclFloat32, spcclSum, comm, stream),
          spcclSuccess);
    EXPECT_EQ(buffer.download(stream)[7], std::pow(3.0f, 20.0f));
    // The next twenty reuse the pool's buffers: new ones only where more
    // calls are in flight at once than before, never past twenty in all
    // (without reuse there would be forty).
    EXPECT_LE(emuCudaCounters().pinnedAllocations, 20u);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(StreamLogic, EveryFamilyOnDeviceMemoryAndAStream) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 2048;
    void* stream = emuCudaStreamCreate();
    // Sparse: one non-zero per 64, rank-dependent positions overlap.
    std::vector<float> sparseIn(count, 0.0f);
    for (size_t i = rank; i < count; i += 64) sparseIn[i] = 1.0f + static_cast<float>(i);
    DeviceFloats sIn(count, stream, sparseIn), sOut(count, stream);
    EXPECT_EQ(
        spcclSparseAllReduce(sIn.data, sOut.data, count, spcclFloat32, spcclSum, comm, stream),
        spcclSuccess);
    // Compressed: within its bound of the exact sum (checked loosely here).
    DeviceFloats cIn(count, stream, rankValues(rank, count)), cOut(count, stream);
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    EXPECT_EQ(spcclCompressedAllReduce(cIn.data, cOut.data, count, spcclFloat32, spcclSum, &cfg,
                                       comm, stream),
              spcclSuccess);
    // Migration all-reduce with nothing migrated: the plain all-reduce.
    DeviceFloats mIn(count, stream, rankValues(rank, count)), mOut(count, stream);
    EXPECT_EQ(spcclMigrateAllReduce(mIn.data, mOut.data, count, nullptr, 0, 0, spcclFloat32,
                                    spcclSum, comm, stream),
              spcclSuccess);
    // Grouped send/recv between the two ranks.
    DeviceFloats pSend(count, stream, rankValues(rank, count)), pRecv(count, stream);
    EXPECT_EQ(spcclGroupStart(), spcclSuccess);
    EXPECT_EQ(spcclSend(pSend.data, count, spcclFloat32, 1 - rank, comm, stream), spcclSuccess);
    EXPECT_EQ(spcclRecv(pRecv.data, count, spcclFloat32, 1 - rank, comm, stream), spcclSuccess);
    EXPECT_EQ(spcclGroupEnd(), spcclSuccess);

    const std::vector<float> sparseOut = sOut.download(stream);
    for (size_t i = 0; i < count; ++i) {
      const float expected = (i % 64 == 0 || i % 64 == 1) ? 1.0f + static_cast<float>(i) : 0.0f;
      if (sparseOut[i] != expected) {
        ADD_FAILURE() << "sparse element " << i << ": " << sparseOut[i] << ", expected "
                      << expected;
        break;
      }
    }
    const std::vector<float> compressed = cOut.download(stream);
    // The same call on host memory: the codec is deterministic, so the
    // staged call must give the same bits.
    std::vector<float> hostIn = rankValues(rank, count), hostOut(count);
    EXPECT_EQ(spcclCompressedAllReduce(hostIn.data(), hostOut.data(), count, spcclFloat32, spcclSum,
                                       &cfg, comm, nullptr),
              spcclSuccess);
    const std::vector<float> migrated = mOut.download(stream);
    const std::vector<float> received = pRecv.download(stream);
    const std::vector<float> peer = rankValues(1 - rank, count);
    for (size_t i = 0; i < count; ++i) {
      const float exact = sumOverRanks(2, i);
      EXPECT_EQ(compressed[i], hostOut[i]) << "compressed element " << i;
      EXPECT_EQ(migrated[i], exact) << "migration element " << i;
      EXPECT_EQ(received[i], peer[i]) << "received element " << i;
      if (::testing::Test::HasFailure()) break;
    }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(StreamLogic, DeviceBuffersWithoutAStreamAndNonBlocking) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 513;
    DeviceFloats send(count, nullptr, rankValues(rank, count)), recv(count, nullptr);
    cuStreamSynchronize(nullptr);
    EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    // Synchronous: the result is in device memory when the call returns.
    std::vector<float> out = recv.download(nullptr);
    EXPECT_EQ(out[5], sumOverRanks(2, 5));
    DeviceFloats again(count, nullptr);
    spcclRequest_t request = nullptr;
    EXPECT_EQ(spcclIallReduce(send.data, again.data, count, spcclFloat32, spcclSum, comm, &request),
              spcclSuccess);
    EXPECT_EQ(spcclWait(request), spcclSuccess);
    out = again.download(nullptr);
    EXPECT_EQ(out[count - 1], sumOverRanks(2, count - 1));
    return kChildOk;
  });
}

TEST(StreamLogic, MixedKindsAreRejectedNamingTheArguments) {
  runOnRanks(1, [](int, spcclComm_t comm) {
    DeviceFloats device(16, nullptr);
    std::vector<float> host(16, 1.0f);
    void* pinned = emuCudaAlloc(16 * sizeof(float), EmuCudaPinnedHost);
    void* managed = emuCudaAlloc(16 * sizeof(float), EmuCudaManaged);
    EXPECT_EQ(spcclAllReduce(device.data, host.data(), 16, spcclFloat32, spcclSum, comm, nullptr),
              spcclInvalidArgument);
    const std::string message = spcclGetLastError(comm);
    EXPECT_NE(message.find("recvbuff is host memory but sendbuff is device memory"),
              std::string::npos)
        << message;
    EXPECT_EQ(spcclAllReduce(pinned, device.data, 16, spcclFloat32, spcclSum, comm, nullptr),
              spcclInvalidArgument);
    EXPECT_NE(std::string(spcclGetLastError(comm)).find("pinned host memory"), std::string::npos)
        << spcclGetLastError(comm);
    // Pinned, managed and plain host memory mix: the CPU reaches them all.
    EXPECT_EQ(spcclAllReduce(pinned, managed, 16, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    EXPECT_EQ(spcclAllReduce(managed, host.data(), 16, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    emuCudaFree(pinned);
    emuCudaFree(managed);
    return kChildOk;
  });
}

// A stream-ordered call that fails after it returned: the ranks disagree
// on the count, so the engine's signature check fails the call on the
// worker. The failure is the async error, and every later call returns it.
TEST(StreamLogic, AFailureAfterTheReturnIsTheAsyncError) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = rank == 0 ? 64 : 65;
    void* stream = emuCudaStreamCreate();
    DeviceFloats send(65, stream, rankValues(rank, 65)), recv(65, stream);
    EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, stream),
              spcclSuccess);
    cuStreamSynchronize(stream);  // the stream is released, call failed or not
    spcclResult_t asyncError = spcclSuccess;
    EXPECT_EQ(spcclCommGetAsyncError(comm, &asyncError), spcclSuccess);
    EXPECT_NE(asyncError, spcclSuccess);
    EXPECT_EQ(spcclAllReduce(send.data, recv.data, 8, spcclFloat32, spcclSum, comm, stream),
              asyncError);
    EXPECT_NE(std::string(spcclGetLastError(comm)).find("earlier call enqueued on a stream"),
              std::string::npos)
        << spcclGetLastError(comm);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

// spcclCommAbort with calls still waiting for their stream: the streams
// are released at once (the calls fail), nothing hangs.
struct Gate {
  std::chrono::milliseconds hold;
};
void holdStream(void* arg) { std::this_thread::sleep_for(static_cast<Gate*>(arg)->hold); }

TEST(StreamLogic, AbortReleasesStreamsWaitingForTheirCalls) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    DeviceFloats buffer(256, stream, rankValues(rank, 256));
    Gate gate{std::chrono::milliseconds(300)};
    emuCudaLaunch(stream, &holdStream, &gate);  // the worker waits for the stream
    for (int call = 0; call < 4; ++call)
      EXPECT_EQ(spcclAllReduce(buffer.data, buffer.data, 256, spcclFloat32, spcclSum, comm, stream),
                spcclSuccess);
    const auto start = std::chrono::steady_clock::now();
    if (rank == 0) {
      EXPECT_EQ(spcclCommAbort(comm), spcclSuccess);
    }
    cuStreamSynchronize(stream);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 15.0) << "the stream was held after the abort";
    emuCudaStreamDestroy(stream);
    if (rank == 0) _exit(::testing::Test::HasFailure() ? kChildWrongResult : kChildOk);
    return kChildOk;
  });
}

}  // namespace

namespace {

// One rank rejects a call that another has already enqueued on its stream
// (a broadcast's root checks sendbuff, the others do not read it): the
// enqueued side fails with the root's reason, as its async error, and no
// rank hangs or sees a collective mismatch.
TEST(StreamLogic, ACallRejectedByOneRankFailsTheOthersStreamCall) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    DeviceFloats send(64, stream, rankValues(rank, 64));
    std::vector<float> hostRecv(64, 0.0f);
    const spcclResult_t result =
        spcclBroadcast(send.data, hostRecv.data(), 64, spcclFloat32, 0, comm, stream);
    cuStreamSynchronize(stream);
    if (rank == 0) {
      EXPECT_EQ(result, spcclInvalidArgument);
    } else {
      EXPECT_EQ(result, spcclSuccess);  // enqueued: the failure comes later
      spcclResult_t asyncError = spcclSuccess;
      EXPECT_EQ(spcclCommGetAsyncError(comm, &asyncError), spcclSuccess);
      EXPECT_NE(asyncError, spcclSuccess);
    }
    const std::string why = spcclGetLastError(comm);
    EXPECT_EQ(why.find("mismatch"), std::string::npos) << why;
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

}  // namespace

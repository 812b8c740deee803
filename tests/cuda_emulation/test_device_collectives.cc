// The device-resident reduce-scatter, all-gather, broadcast and reduce
// (coll/device_collectives.h) against the emulated driver: real ranks
// (forked processes, real sockets), emulated device memory that a peer
// maps through its IPC handle, cuLaunchKernel running a HOST stand-in of
// spccl's kernel. So this proves the schedules (handles, offsets, blocks,
// barriers, stream order, fallback, errors), NOT the CUDA kernel or a
// GPU's IPC (tests/gpu, on a lent GPU).
//
// Every result is compared bit for bit with the CPU collective of the same
// inputs on host buffers, in the same job. Whether the path was taken is
// read from the emulation's counters: on it a call copies nothing between
// host and device, and runs kernels (reductions) or device-to-device
// copies; falling back, it does neither.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "device_collective_shapes.h"
#include "device_values.h"
#include "emulated_ranks.h"
#include "rank_failure.h"
#include "spccl.h"
#include "staging_report.h"

using namespace spccl::testing;

namespace {

// Whether `seen` is the device path's work on this rank: nothing through
// the host, and the kernel or the copies this rank's part needs.
void expectDevicePath(const Shape& s, bool inPlace, const Seen& seen, const std::string& what) {
  EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host (staged or fallen back)";
  switch (s.coll) {
    case Coll::ReduceScatter:
      EXPECT_GT(seen.launches, 0u) << what << ": no kernel ran";
      break;
    case Coll::Reduce:
      EXPECT_EQ(seen.launches > 0, s.rank == s.root()) << what << ": kernels " << seen.launches;
      break;
    case Coll::AllGather:
      EXPECT_EQ(seen.copiesOnDevice, s.n() - (inPlace ? 1 : 0)) << what;
      break;
    case Coll::Broadcast:
      EXPECT_EQ(seen.copiesOnDevice, inPlace && s.rank == s.root() ? 0u : 1u) << what;
      break;
  }
}

// How checkOne reads the path a call took on this rank: from the
// emulation's counters (the device path's work, or none: every rank fell
// back), or not at all where ranks share the counters (threads of one
// process: the caller reads the staging report).
enum class Path { Device, Fallback, ReadByCaller };

// One call on device buffers (stream or NULL stream, in place or not),
// checked bit for bit against the reference and for the path taken.
void checkOne(const Shape& s, spcclComm_t comm, bool inPlace, void* stream,
              Path path = Path::Device) {
  const std::string what = s.describe(inPlace, stream) + ", rank " + std::to_string(s.rank);
  const std::vector<unsigned char> expected = reference(s, comm);
  const ShapeBuffers buffers(s, inPlace);
  const EmuCudaCounters before = now();
  ASSERT_EQ(callOn(s, buffers.send(), buffers.recv(), comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  if (path == Path::Device) expectDevicePath(s, inPlace, since(before), what);
  if (path == Path::Fallback) expectFallback(since(before), what);
  EXPECT_EQ(buffers.result(stream), expected) << what;
}

// Every type, the reductions with sum and avg (avg: a sum, then one
// division, each step rounded to the type as on the CPU), in place and
// not, on a stream and not.
void everyType(int n) {
  runOnRanksWithStream(n, [n](int rank, spcclComm_t comm, void* stream) {
    for (Coll coll : kColls)
      for (int t = 0; t < spcclNumTypes; ++t)
        for (spcclRedOp_t op : {spcclSum, spcclAvg}) {
          if (op == spcclAvg && !reduces(coll)) continue;
          const Shape s{coll, static_cast<spcclDataType_t>(t), op, 37, rank, n};
          for (bool inPlace : {false, true})
            for (void* on : {static_cast<void*>(nullptr), stream}) checkOne(s, comm, inPlace, on);
        }
  });
}

TEST(DeviceCollectives, EveryTypeInAndOutOfPlaceStreamAndNullStreamN2) { everyType(2); }
TEST(DeviceCollectives, EveryTypeInAndOutOfPlaceStreamAndNullStreamN3) { everyType(3); }

// The other ops of the reductions, and counts the launch splits into
// several blocks of threads (4099) or that are a single element.
TEST(DeviceCollectives, OtherOpsAndCountsN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (Coll coll : {Coll::ReduceScatter, Coll::Reduce})
      for (spcclRedOp_t op : {spcclProd, spcclMax, spcclMin})
        checkOne(Shape{coll, spcclFloat32, op, 100, rank, 3}, comm, false, nullptr);
    for (Coll coll : kColls)
      for (size_t count : {size_t{1}, size_t{4099}})
        checkOne(Shape{coll, spcclBfloat16, spcclSum, count, rank, 3}, comm, false, nullptr);
    return kChildOk;
  });
}

// Two ranks as threads of one process, on one emulated device: each uses
// the other's pointers directly (the driver refuses to open a process's
// own IPC handle, so an IPC handle here would make both fall back). The
// reduce-scatter and the all-gather, in place and not, on the NULL stream
// and a stream, each bit-equal to the CPU collective; the path is read
// from each rank's staging report (the threads share the emulation's
// counters): 4 calls of each ran device-resident on each rank.
TEST(DeviceCollectives, RanksThatAreThreadsOfOneProcess) {
  runOnThreadRanks({{"all-gather", 4}, {"reduce-scatter", 4}},
                   [](int rank, spcclComm_t comm, void* stream) {
                     for (Coll coll : {Coll::ReduceScatter, Coll::AllGather})
                       for (bool inPlace : {false, true})
                         for (void* on : {static_cast<void*>(nullptr), stream})
                           checkOne(Shape{coll, spcclInt32, spcclSum, 300, rank, 2}, comm, inPlace,
                                    on, Path::ReadByCaller);
                   });
}

// The spcclI* forms run device-resident too, queued on the worker; two in
// flight at once, each checked.
TEST(DeviceCollectives, NonBlockingCallsTakeThePathN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (Coll coll : kColls) {
      const Shape s{coll, spcclInt32, spcclSum, 300, rank, 3};
      const std::string what = std::string(nameOf(coll)) + ", rank " + std::to_string(rank);
      const std::vector<unsigned char> expected = reference(s, comm);
      const std::vector<unsigned char> input = s.input();
      DeviceBytes send1(s.sendBytes()), send2(s.sendBytes()), recv1(s.recvBytes()),
          recv2(s.recvBytes());
      if (!input.empty()) {
        send1.set(input);
        send2.set(input);
      }
      auto sendOf = [&](const DeviceBytes& b) { return s.sendBytes() > 0 ? b.data() : nullptr; };
      auto recvOf = [&](const DeviceBytes& b) { return s.recvBytes() > 0 ? b.data() : nullptr; };
      const EmuCudaCounters before = now();
      spcclRequest_t a = nullptr, b = nullptr;
      EXPECT_EQ(callOn(s, sendOf(send1), recvOf(recv1), comm, nullptr, &a), spcclSuccess) << what;
      EXPECT_EQ(callOn(s, sendOf(send2), recvOf(recv2), comm, nullptr, &b), spcclSuccess) << what;
      EXPECT_EQ(spcclWait(b), spcclSuccess) << what << ": " << spcclGetLastError(comm);
      EXPECT_EQ(spcclWait(a), spcclSuccess) << what << ": " << spcclGetLastError(comm);
      const Seen seen = since(before);
      EXPECT_EQ(seen.hostCopies, 0u) << what << ": the calls were staged";
      // (A reduce's non-root only waits at the barrier.)
      if (coll != Coll::Reduce || rank == s.root()) {
        EXPECT_GT(seen.launches + seen.copiesOnDevice, 0u) << what << ": nothing ran on a device";
      }
      if (s.recvBytes() == 0) continue;
      EXPECT_EQ(recv1.get(nullptr), expected) << what << ", first";
      EXPECT_EQ(recv2.get(nullptr), expected) << what << ", second";
    }
    return kChildOk;
  });
}

// Rank 0 passes host buffers: every rank falls back to the CPU collective
// in the same call, with the right result; nothing runs on a device.
TEST(DeviceCollectives, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (Coll coll : kColls) {
      const Shape s{coll, spcclFloat32, spcclSum, 33, rank, 3};
      std::vector<unsigned char> input = s.input(), got(s.recvBytes());
      const std::string what = std::string(nameOf(coll)) + ", rank " + std::to_string(rank);
      const std::vector<unsigned char> expected = reference(s, comm);
      DeviceBytes send(s.sendBytes()), recv(s.recvBytes());
      const EmuCudaCounters before = now();
      if (rank == 0) {
        EXPECT_EQ(callOn(s, input.empty() ? nullptr : input.data(),
                         got.empty() ? nullptr : got.data(), comm, nullptr),
                  spcclSuccess)
            << what;
      } else {
        if (!input.empty()) send.set(input);
        EXPECT_EQ(callOn(s, s.sendBytes() > 0 ? send.data() : nullptr,
                         s.recvBytes() > 0 ? recv.data() : nullptr, comm, nullptr),
                  spcclSuccess)
            << what << ": " << spcclGetLastError(comm);
      }
      expectFallback(since(before), what);
      if (rank != 0 && s.recvBytes() > 0) got = recv.get(nullptr);
      EXPECT_EQ(got, expected) << what;
    }
    return kChildOk;
  });
}

// Ranks on three emulated devices: with peer access between all of them
// the path is taken (kernels and copies read the other devices' memory
// through the opened IPC handles); where device 2 cannot access device
// 0's memory, every rank falls back in every call.
void onThreeDevices(const char* noPeerAccess, Path path) {
  runOnThreeDevices(noPeerAccess, [path](int rank, spcclComm_t comm, void* stream) {
    for (Coll coll : kColls)
      for (bool inPlace : {false, true})
        checkOne(Shape{coll, spcclFloat32, spcclSum, 100, rank, 3}, comm, inPlace, stream, path);
  });
}

TEST(DeviceCollectives, RanksOnPeerDevicesTakeThePathN3) { onThreeDevices(nullptr, Path::Device); }
TEST(DeviceCollectives, OnePairWithoutPeerAccessFallsBackOnEveryRankN3) {
  onThreeDevices("2:0", Path::Fallback);
}

// A kernel launch that fails on rank 1 (the reduce's root): rank 1 fails
// with the driver's error by name, the others name rank 1, at once.
void failedLaunch(Coll coll) {
  runOnRanks(2, [coll](int rank, spcclComm_t comm) {
    const Shape s{coll, spcclFloat32, spcclSum, 16, rank, 2};
    DeviceBytes send(s.sendBytes()), recv(s.recvBytes());
    send.set(s.input());
    if (rank == 1) emuCudaFailLaunches(1);
    const spcclResult_t result =
        callOn(s, send.data(), s.recvBytes() > 0 ? recv.data() : nullptr, comm, nullptr);
    const std::string error = spcclGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(result, spcclSystemError) << error;
      EXPECT_NE(error.find("cuLaunchKernel"), std::string::npos) << error;
    } else {
      EXPECT_EQ(result, spcclRemoteError) << error;
      EXPECT_NE(error.find("rank 1 failed the reduction"), std::string::npos) << error;
    }
    return kChildOk;
  });
}

// A copy that fails partway on rank 1: its first copy is held at the
// device copy gate (opened 300 ms later by another thread), its second is
// refused. Rank 1 must still wait for the held copy before returning (it
// reads a peer's buffer and writes recvbuff, the peer's and the user's
// again once the call ends); every rank fails, the others naming rank 1.
// The all-reduce's copies are those of its gather step (peers' blocks).
enum class Copying { AllGather, AllToAll, AllReduce };

spcclResult_t callCopying(Copying coll, const void* send, void* recv, size_t count,
                          spcclComm_t comm) {
  switch (coll) {
    case Copying::AllGather:
      return spcclAllGather(send, recv, count, spcclFloat32, comm, nullptr);
    case Copying::AllToAll:
      return spcclAllToAll(send, recv, count, spcclFloat32, comm, nullptr);
    case Copying::AllReduce:
      return spcclAllReduce(send, recv, count, spcclFloat32, spcclSum, comm, nullptr);
  }
  return spcclInternalError;
}

// Runs `call` on rank `held` with `hold` set up, a thread opening the gate
// with `open` 300 ms later: the rank must not return before that.
template <typename Hold, typename Open, typename Call>
TimedResult heldWhileFailing(int rank, int held, spcclComm_t comm, Hold hold, Open open,
                             Call call) {
  std::atomic<bool> opened{false};
  std::thread opener;
  if (rank == held) {
    hold();
    opener = std::thread([&opened, open] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      opened = true;
      open();
    });
  }
  const TimedResult got = timedCall(comm, call);
  if (rank == held) {
    EXPECT_TRUE(opened.load()) << "rank " << held << " returned before its queued work ran";
    opener.join();
  }
  return got;
}

void failedCopyWaitsForTheQueuedOnes(Copying coll) {
  runOnRanks(3, [coll](int rank, spcclComm_t comm) {
    constexpr size_t kCount = 64;
    DeviceBytes send(3 * kCount * sizeof(float)), recv(3 * kCount * sizeof(float));
    const size_t count = coll == Copying::AllReduce ? 3 * kCount : kCount;
    const TimedResult got = heldWhileFailing(
        rank, 1, comm,
        [] {
          emuCudaCloseDeviceCopyGate(0);
          emuCudaFailMemcpyAsyncAfter(1, 1);
        },
        [] { emuCudaOpenDeviceCopyGate(); },
        [&] { return callCopying(coll, send.data(), recv.data(), count, comm); });
    expectFailedOnEveryRank(rank, 1, got, "cuMemcpyAsync");
    return kChildOk;
  });
}

TEST(DeviceCollectives, FailedCopyInAllGatherWaitsForTheQueuedCopies) {
  failedCopyWaitsForTheQueuedOnes(Copying::AllGather);
}
TEST(DeviceCollectives, FailedCopyInAllToAllWaitsForTheQueuedCopies) {
  failedCopyWaitsForTheQueuedOnes(Copying::AllToAll);
}
TEST(DeviceCollectives, FailedCopyInAllReduceWaitsForTheQueuedCopies) {
  failedCopyWaitsForTheQueuedOnes(Copying::AllReduce);
}

// 17 ranks: each reduces its block in two launches (at most 16 inputs
// each). Rank 0's first launch is held at the launch gate, its second
// fails: rank 0 must wait for the first (it reads the peers' sendbuffs)
// before returning; every rank fails, the others naming rank 0.
TEST(DeviceCollectives, FailedSecondLaunchWaitsForTheFirstN17) {
  constexpr int kRanks = 17;
  runOnRanks(kRanks, [](int rank, spcclComm_t comm) {
    constexpr size_t kCount = 4 * kRanks;
    DeviceBytes send(kCount * sizeof(float)), recv(kCount * sizeof(float));
    const TimedResult got = heldWhileFailing(
        rank, 0, comm,
        [] {
          emuCudaCloseLaunchGate(0);
          emuCudaFailLaunchesAfter(1, 1);
        },
        [] { emuCudaOpenLaunchGate(); },
        [&] {
          return spcclAllReduce(send.data(), recv.data(), kCount, spcclFloat32, spcclSum, comm,
                                nullptr);
        });
    expectFailedOnEveryRank(rank, 0, got, "cuLaunchKernel");
    return kChildOk;
  });
}

// Rank 0 passes host buffers, so every rank falls back; rank 1's copy of
// its device sendbuff in fails before the CPU all-gather. Its peers, in
// that all-gather already, fail at once naming rank 1, not at the deadline
// (nor when rank 1 exits).
TEST(DeviceCollectives, FailedFallbackCopyFailsThePeersAtOnceNamingTheRank) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    constexpr size_t kCount = 64;
    DeviceBytes send(kCount * sizeof(float)), recv(3 * kCount * sizeof(float));
    std::vector<float> hostSend(kCount), hostRecv(3 * kCount);
    if (rank == 1) emuCudaFailMemcpyAsyncAfter(0, 1);
    const TimedResult got = timedCall(comm, [&] {
      return rank == 0
                 ? spcclAllGather(hostSend.data(), hostRecv.data(), kCount, spcclFloat32, comm,
                                  nullptr)
                 : spcclAllGather(send.data(), recv.data(), kCount, spcclFloat32, comm, nullptr);
    });
    expectFailedOnEveryRank(rank, 1, got, "copying sendbuff in");
    // Rank 1 stays up a while: its exit would close its connections and
    // tell the peers too, which must have learnt it before.
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    if (rank != 1) {
      EXPECT_LT(got.seconds, 1.0) << "rank " << rank << " was not told at once";
    }
    return kChildOk;
  });
}

TEST(DeviceCollectives, FailedLaunchInReduceScatterFailsEveryRankNamingIt) {
  failedLaunch(Coll::ReduceScatter);
}
TEST(DeviceCollectives, FailedLaunchInReduceFailsEveryRankNamingIt) { failedLaunch(Coll::Reduce); }

}  // namespace

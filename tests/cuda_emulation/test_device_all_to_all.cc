// The device-resident all-to-all (coll/device_all_to_all.h) against the
// emulated driver, as test_device_collectives.cc runs the other dense
// collectives: forked ranks over real sockets, emulated device memory that
// a peer maps through its IPC handle. No kernel runs: the schedule is
// device-to-device copies only, so this proves its handles, block offsets,
// barriers, stream order and fallback, NOT a GPU's IPC (tests/gpu).
//
// Every result is compared bit for bit with the CPU all-to-all of the same
// inputs on host buffers, in the same job. The path taken is read from the
// emulation's counters: on it a rank makes n device copies and none
// through the host (in place one more: its send data into the
// communicator's scratch, which the peers read); falling back, no device
// copy.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_collective_shapes.h"
#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"
#include "staging_report.h"

using namespace spccl::testing;

namespace {

// One all-to-all: `count` elements to and from every rank.
struct Exchange {
  spcclDataType_t type;
  size_t count;
  int rank, nranks;
  size_t bytes() const { return count * spcclTypeSize(type) * static_cast<size_t>(nranks); }
  std::vector<unsigned char> input() const {
    return inputOf(rank, type, count * static_cast<size_t>(nranks));
  }
  std::string describe(bool inPlace, void* stream) const {
    return "all-to-all type " + std::to_string(type) + " count " + std::to_string(count) + " on " +
           std::to_string(nranks) + " ranks" + (inPlace ? ", in place" : ", out of place") +
           (stream != nullptr ? ", on a stream" : ", NULL stream") + ", rank " +
           std::to_string(rank);
  }
  // The device path's copies on this rank: one block from every rank, and
  // in place the send data into the scratch first.
  uint64_t devicePathCopies(bool inPlace) const {
    return static_cast<uint64_t>(nranks) + (inPlace ? 1 : 0);
  }
};

// The CPU all-to-all of every rank's input, on host buffers.
std::vector<unsigned char> reference(const Exchange& e, spcclComm_t comm) {
  const std::vector<unsigned char> in = e.input();
  std::vector<unsigned char> out(in.size());
  EXPECT_EQ(spcclAllToAll(in.data(), out.data(), e.count, e.type, comm, nullptr), spcclSuccess)
      << spcclGetLastError(comm);
  return out;
}

enum class Path { Device, Fallback, ReadByCaller };

// One call on device buffers, checked bit for bit and for the path (in
// place: one buffer for both). Returns what the counters saw.
Seen checkOne(const Exchange& e, spcclComm_t comm, bool inPlace, void* stream,
              Path path = Path::Device) {
  const std::string what = e.describe(inPlace, stream);
  const std::vector<unsigned char> expected = reference(e, comm);
  DeviceBytes send(e.bytes()), recv(e.bytes());
  send.set(e.input());
  void* out = inPlace ? send.data() : recv.data();
  const EmuCudaCounters before = now();
  EXPECT_EQ(spcclAllToAll(send.data(), out, e.count, e.type, comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  const Seen seen = since(before);
  if (path == Path::Device) expectCopiesOnDevice(seen, e.devicePathCopies(inPlace), what);
  if (path == Path::Fallback) expectFallback(seen, what);
  EXPECT_EQ(inPlace ? send.get(stream) : recv.get(stream), expected) << what;
  return seen;
}

void everyType(int n) {
  runOnRanksWithStream(n, [n](int rank, spcclComm_t comm, void* stream) {
    for (int t = 0; t < spcclNumTypes; ++t)
      for (bool inPlace : {false, true})
        for (void* on : {static_cast<void*>(nullptr), stream})
          checkOne(Exchange{static_cast<spcclDataType_t>(t), 37, rank, n}, comm, inPlace, on);
  });
}

TEST(DeviceAllToAll, EveryTypeInAndOutOfPlaceStreamAndNullStreamN2) { everyType(2); }
TEST(DeviceAllToAll, EveryTypeInAndOutOfPlaceStreamAndNullStreamN3) { everyType(3); }

// One element per peer, and blocks whose size is not a multiple of 8 bytes.
TEST(DeviceAllToAll, CountsN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (size_t count : {size_t{1}, size_t{4099}})
      for (spcclDataType_t type : {spcclInt8, spcclBfloat16, spcclFloat64})
        for (bool inPlace : {false, true})
          checkOne(Exchange{type, count, rank, 3}, comm, inPlace, nullptr);
    return kChildOk;
  });
}

// In-place calls reuse the communicator's scratch: the first allocates it
// here and opens the peers' (n allocations live more, counted by the
// emulation), a second of the same size or a smaller one allocates and
// opens nothing; one past the scratch grows it (n more), and is right.
TEST(DeviceAllToAll, InPlaceCallsReuseTheScratchAndGrowItN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    struct Step {
      size_t count;
      int64_t newAllocations;
    };
    for (const Step& step : {Step{37, 3}, Step{37, 0}, Step{10, 0}, Step{4099, 3}, Step{4099, 0}}) {
      const Exchange e{spcclFloat32, step.count, rank, 3};
      DeviceBytes buffer(e.bytes());
      buffer.set(e.input());
      const std::vector<unsigned char> expected = reference(e, comm);
      const int64_t live = now().liveAllocations;
      EXPECT_EQ(spcclAllToAll(buffer.data(), buffer.data(), e.count, e.type, comm, nullptr),
                spcclSuccess)
          << spcclGetLastError(comm);
      EXPECT_EQ(now().liveAllocations - live, step.newAllocations) << e.describe(true, nullptr);
      EXPECT_EQ(buffer.get(nullptr), expected) << e.describe(true, nullptr);
    }
    return kChildOk;
  });
}

// The scratch of an in-place call on a stream is allocated on the
// caller's thread, when the call is made: with the stream held by an
// earlier host function, the allocation is already counted before the
// call runs (cuMemAlloc may wait for the device, so not in the held
// body). The result is right once the stream is released.
TEST(DeviceAllToAll, InPlaceScratchIsAllocatedWhenTheCallIsMadeN2) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const Exchange e{spcclFloat32, 257, rank, 2};
    const std::vector<unsigned char> expected = reference(e, comm);
    DeviceBytes buffer(e.bytes());
    buffer.set(e.input());
    void* stream = emuCudaStreamCreate();
    std::atomic<bool> released{false};
    EXPECT_EQ(emuCudaLaunch(stream, holdStreamUntilReleased, &released), 0);
    const int64_t live = now().liveAllocations;
    EXPECT_EQ(spcclAllToAll(buffer.data(), buffer.data(), e.count, e.type, comm, stream),
              spcclSuccess)
        << spcclGetLastError(comm);
    EXPECT_EQ(now().liveAllocations - live, 1)
        << e.describe(true, stream) << ": the scratch not allocated by the caller";
    released = true;
    cuStreamSynchronize(stream);
    EXPECT_EQ(buffer.get(stream), expected) << e.describe(true, stream);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

// spcclIallToAll runs device-resident too, queued on the worker; two in
// flight at once, each checked.
TEST(DeviceAllToAll, NonBlockingCallsTakeThePathN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const Exchange e{spcclInt32, 300, rank, 3};
    const std::string what = "spcclIallToAll, rank " + std::to_string(rank);
    const std::vector<unsigned char> expected = reference(e, comm);
    DeviceBytes send1(e.bytes()), send2(e.bytes()), recv1(e.bytes()), recv2(e.bytes());
    send1.set(e.input());
    send2.set(e.input());
    const EmuCudaCounters before = now();
    spcclRequest_t a = nullptr, b = nullptr;
    EXPECT_EQ(spcclIallToAll(send1.data(), recv1.data(), e.count, e.type, comm, &a), spcclSuccess);
    EXPECT_EQ(spcclIallToAll(send2.data(), recv2.data(), e.count, e.type, comm, &b), spcclSuccess);
    EXPECT_EQ(spcclWait(b), spcclSuccess) << what << ": " << spcclGetLastError(comm);
    EXPECT_EQ(spcclWait(a), spcclSuccess) << what << ": " << spcclGetLastError(comm);
    expectCopiesOnDevice(since(before), 6, what);
    EXPECT_EQ(recv1.get(nullptr), expected) << what << ", first";
    EXPECT_EQ(recv2.get(nullptr), expected) << what << ", second";
    return kChildOk;
  });
}

// Rank 0 passes host buffers (in place and not): every rank falls back in
// the same call, with the right result. In place, a rank with device
// buffers has copied its send data to the scratch before the agreement
// (that copy is all it did on the device: the fallback's cost).
TEST(DeviceAllToAll, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (bool inPlace : {false, true}) {
      const Exchange e{spcclFloat32, 33, rank, 3};
      const std::string what = e.describe(inPlace, nullptr);
      const std::vector<unsigned char> expected = reference(e, comm);
      std::vector<unsigned char> input = e.input(), got(e.bytes());
      DeviceBytes send(e.bytes()), recv(e.bytes());
      send.set(input);
      const void* from = rank == 0 ? static_cast<const void*>(input.data()) : send.data();
      void* to = rank == 0 ? static_cast<void*>(got.data()) : recv.data();
      if (inPlace) to = const_cast<void*>(from);
      const EmuCudaCounters before = now();
      EXPECT_EQ(spcclAllToAll(from, to, e.count, e.type, comm, nullptr), spcclSuccess)
          << what << ": " << spcclGetLastError(comm);
      const Seen seen = since(before);
      if (rank != 0) {
        EXPECT_GT(seen.hostCopies, 0u) << what << ": the call did not fall back";
        EXPECT_EQ(seen.copiesOnDevice, inPlace ? 1u : 0u) << what;
      }
      if (rank == 0 && inPlace) got = input;
      if (rank != 0) got = inPlace ? send.get(nullptr) : recv.get(nullptr);
      EXPECT_EQ(got, expected) << what;
    }
    return kChildOk;
  });
}

// A call from another device's context than the communicator's fails
// (bindContext) before anything is allocated for it: rank 1's in-place
// call on device 1, on a communicator bound to device 0 by a first call,
// reserves no scratch there (later calls would have found it and copied
// their send data to device 1).
TEST(DeviceAllToAll, InPlaceCallFromAnotherDeviceReservesNoScratchN2) {
  EmulatedHost host(2, nullptr);
  runOnRanks(2,
             [](int rank, spcclComm_t comm) {
               const Exchange small{spcclFloat32, 16, rank, 2}, large{spcclFloat32, 4099, rank, 2};
               const std::vector<unsigned char> expected = reference(small, comm);
               DeviceBytes buffer(small.bytes());
               buffer.set(small.input());
               EXPECT_EQ(spcclAllToAll(buffer.data(), buffer.data(), small.count, small.type, comm,
                                       nullptr),
                         spcclSuccess)
                   << spcclGetLastError(comm);
               EXPECT_EQ(buffer.get(nullptr), expected) << small.describe(true, nullptr);
               if (rank == 1) {
                 EXPECT_EQ(emuCudaSetCurrentDevice(1), 0);
               }
               DeviceBytes other(large.bytes());  // on the current device
               other.set(large.input());
               const int64_t live = now().liveAllocations;
               const spcclResult_t result = spcclAllToAll(other.data(), other.data(), large.count,
                                                          large.type, comm, nullptr);
               if (rank == 1) {
                 EXPECT_EQ(result, spcclInvalidUsage) << spcclGetLastError(comm);
                 EXPECT_EQ(now().liveAllocations - live, 0) << "a scratch was reserved on device 1";
               } else {
                 EXPECT_EQ(result, spcclRemoteError) << spcclGetLastError(comm);
               }
               return kChildOk;
             },
             {0, 0});
}

// Ranks on three emulated devices: with peer access between all of them
// the copies read the other devices' memory through the opened IPC
// handles; where device 2 cannot access device 0's, every rank falls back.
void onThreeDevices(const char* noPeerAccess, Path path) {
  runOnThreeDevices(noPeerAccess, [path](int rank, spcclComm_t comm, void* stream) {
    for (bool inPlace : {false, true})
      checkOne(Exchange{spcclFloat32, 100, rank, 3}, comm, inPlace, stream, path);
  });
}

TEST(DeviceAllToAll, RanksOnPeerDevicesTakeThePathN3) { onThreeDevices(nullptr, Path::Device); }
TEST(DeviceAllToAll, OnePairWithoutPeerAccessFallsBackOnEveryRankN3) {
  onThreeDevices("2:0", Path::Fallback);
}

// Two ranks as threads of one process (each uses the other's pointers as
// they are, the scratch's too): bit-equal in and out of place, on the
// NULL stream and a stream, and each rank's SPCCL_STAGING_REPORT=1 line
// counts the four calls as device-resident.
TEST(DeviceAllToAll, StagingReportCountsTheCallsOfThreadRanks) {
  runOnThreadRanks({{"all-to-all", 4}}, [](int rank, spcclComm_t comm, void* stream) {
    for (bool inPlace : {false, true})
      for (void* on : {static_cast<void*>(nullptr), stream})
        checkOne(Exchange{spcclInt32, 300, rank, 2}, comm, inPlace, on, Path::ReadByCaller);
  });
}

}  // namespace

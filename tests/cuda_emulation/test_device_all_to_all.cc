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
// through the host; falling back, no device copy.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>
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
};

// The CPU all-to-all of every rank's input, on host buffers.
std::vector<unsigned char> reference(const Exchange& e, spcclComm_t comm) {
  const std::vector<unsigned char> in = e.input();
  std::vector<unsigned char> out(in.size());
  EXPECT_EQ(spcclAllToAll(in.data(), out.data(), e.count, e.type, comm, nullptr), spcclSuccess)
      << spcclGetLastError(comm);
  return out;
}

enum class Path { Device, Fallback };

void expectPath(const Exchange& e, Path path, const Seen& seen, const std::string& what) {
  EXPECT_EQ(seen.launches, 0u) << what << ": a kernel ran";
  if (path == Path::Device) {
    EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host (staged or fallen back)";
    EXPECT_EQ(seen.copiesOnDevice, static_cast<uint64_t>(e.nranks)) << what;
  } else {
    EXPECT_EQ(seen.copiesOnDevice, 0u)
        << what << ": a device copy ran (the call did not fall back)";
  }
}

// One call on device buffers, checked bit for bit and for the path. In
// place: one buffer for both, which falls back (coll/device_all_to_all.h).
void checkOne(const Exchange& e, spcclComm_t comm, bool inPlace, void* stream) {
  const std::string what = e.describe(inPlace, stream);
  const std::vector<unsigned char> expected = reference(e, comm);
  DeviceBytes send(e.bytes()), recv(e.bytes());
  send.set(e.input());
  void* out = inPlace ? send.data() : recv.data();
  const EmuCudaCounters before = now();
  ASSERT_EQ(spcclAllToAll(send.data(), out, e.count, e.type, comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  expectPath(e, inPlace ? Path::Fallback : Path::Device, since(before), what);
  EXPECT_EQ(inPlace ? send.get(stream) : recv.get(stream), expected) << what;
}

void everyType(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (int t = 0; t < spcclNumTypes; ++t)
      for (bool inPlace : {false, true})
        for (void* on : {static_cast<void*>(nullptr), stream})
          checkOne(Exchange{static_cast<spcclDataType_t>(t), 37, rank, n}, comm, inPlace, on);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(DeviceAllToAll, EveryTypeStreamAndNullStreamInPlaceFallsBackN2) { everyType(2); }
TEST(DeviceAllToAll, EveryTypeStreamAndNullStreamInPlaceFallsBackN3) { everyType(3); }

// One element per peer, and blocks whose size is not a multiple of 8 bytes.
TEST(DeviceAllToAll, CountsN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (size_t count : {size_t{1}, size_t{4099}})
      for (spcclDataType_t type : {spcclInt8, spcclBfloat16, spcclFloat64})
        checkOne(Exchange{type, count, rank, 3}, comm, false, nullptr);
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
    const Seen seen = since(before);
    EXPECT_EQ(seen.hostCopies, 0u) << what << ": the calls were staged";
    EXPECT_EQ(seen.copiesOnDevice, 6u) << what;
    EXPECT_EQ(recv1.get(nullptr), expected) << what << ", first";
    EXPECT_EQ(recv2.get(nullptr), expected) << what << ", second";
    return kChildOk;
  });
}

// Rank 0 passes host buffers: every rank falls back in the same call, with
// the right result.
TEST(DeviceAllToAll, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const Exchange e{spcclFloat32, 33, rank, 3};
    const std::string what = "rank " + std::to_string(rank);
    const std::vector<unsigned char> expected = reference(e, comm);
    std::vector<unsigned char> input = e.input(), got(e.bytes());
    DeviceBytes send(e.bytes()), recv(e.bytes());
    send.set(input);
    const EmuCudaCounters before = now();
    const void* from = rank == 0 ? static_cast<const void*>(input.data()) : send.data();
    void* to = rank == 0 ? static_cast<void*>(got.data()) : recv.data();
    EXPECT_EQ(spcclAllToAll(from, to, e.count, e.type, comm, nullptr), spcclSuccess)
        << what << ": " << spcclGetLastError(comm);
    expectPath(e, Path::Fallback, since(before), what);
    if (rank != 0) got = recv.get(nullptr);
    EXPECT_EQ(got, expected) << what;
    return kChildOk;
  });
}

// Ranks on three emulated devices: with peer access between all of them
// the copies read the other devices' memory through the opened IPC
// handles; where device 2 cannot access device 0's, every rank falls back.
void onThreeDevices(const char* noPeerAccess, bool devicePath) {
  EmulatedHost host(3, noPeerAccess);
  runOnRanks(3,
             [devicePath](int rank, spcclComm_t comm) {
               void* stream = emuCudaStreamCreate();
               const Exchange e{spcclFloat32, 100, rank, 3};
               const std::string what = e.describe(false, stream);
               const std::vector<unsigned char> expected = reference(e, comm);
               DeviceBytes send(e.bytes()), recv(e.bytes());
               send.set(e.input());
               const EmuCudaCounters before = now();
               EXPECT_EQ(spcclAllToAll(send.data(), recv.data(), e.count, e.type, comm, stream),
                         spcclSuccess)
                   << what << ": " << spcclGetLastError(comm);
               cuStreamSynchronize(stream);
               expectPath(e, devicePath ? Path::Device : Path::Fallback, since(before), what);
               EXPECT_EQ(recv.get(stream), expected) << what;
               emuCudaStreamDestroy(stream);
               return kChildOk;
             },
             {0, 1, 2});
}

TEST(DeviceAllToAll, RanksOnPeerDevicesTakeThePathN3) { onThreeDevices(nullptr, true); }
TEST(DeviceAllToAll, OnePairWithoutPeerAccessFallsBackOnEveryRankN3) {
  onThreeDevices("2:0", false);
}

// Two ranks as threads of one process (each uses the other's pointers as
// they are): bit-equal on the NULL stream and a stream, and each rank's
// SPCCL_STAGING_REPORT=1 line counts both calls as device-resident.
TEST(DeviceAllToAll, StagingReportCountsTheCallsOfThreadRanks) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(1, [](int, const spcclUniqueId&) {
    spcclUniqueId id;
    if (spcclGetUniqueId(&id) != spcclSuccess) return kChildInitFailed;
    StderrCapture capture;
    auto rankThread = [&id](int rank) {
      if (emuCudaSetCurrentDevice(0) != 0) return;
      spcclComm_t comm = initRank(2, id, rank);
      void* stream = emuCudaStreamCreate();
      const Exchange e{spcclInt32, 300, rank, 2};
      const std::vector<unsigned char> expected = reference(e, comm);
      for (void* on : {static_cast<void*>(nullptr), stream}) {
        DeviceBytes send(e.bytes()), recv(e.bytes());
        send.set(e.input());
        EXPECT_EQ(spcclAllToAll(send.data(), recv.data(), e.count, e.type, comm, on), spcclSuccess)
            << spcclGetLastError(comm);
        EXPECT_EQ(recv.get(on), expected) << e.describe(false, on);
      }
      emuCudaStreamDestroy(stream);
      spcclCommDestroy(comm);
    };
    std::thread other(rankThread, 1);
    rankThread(0);
    other.join();
    const std::string report = capture.finish();
    const std::map<std::string, uint64_t> expected = {{"all-to-all", 2}};
    for (int rank : {0, 1})
      EXPECT_EQ(deviceResidentCounts(report, rank), expected)
          << "rank " << rank << "'s staging report:\n"
          << report;
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  unsetenv("SPCCL_STAGING_REPORT");
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

}  // namespace

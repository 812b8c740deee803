// Grouped all-reduces of device buffers (core/device_group.h) against the
// emulated driver, as test_device_all_reduce.cc runs the ungrouped ones:
// forked ranks over real sockets, emulated device memory that peers map
// through IPC handles, cuLaunchKernel running a HOST stand-in of spccl's
// kernel. It proves the group's schedule and agreement, not a GPU.
//
// Whether the path was taken is read two ways: the emulated driver's
// kernel launches, and the count SPCCL_STAGING_REPORT=1 prints when the
// communicator ends (the figure the GPU stage script checks).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

size_t typeBytes(spcclDataType_t type) { return spcclTypeSize(type); }

uint64_t launches() { return emuCudaCounters().kernelLaunches; }

// The CPU all-reduce of every rank's input, on host buffers.
std::vector<unsigned char> reference(spcclComm_t comm, int rank, spcclDataType_t type,
                                     spcclRedOp_t op, size_t count) {
  std::vector<unsigned char> in = inputOf(rank, type, count), out(in.size());
  EXPECT_EQ(spcclAllReduce(in.data(), out.data(), count, type, op, comm, nullptr), spcclSuccess);
  return out;
}

// One all-reduce of a group: its type, op, count and whether in place.
struct Planned {
  spcclDataType_t type;
  spcclRedOp_t op;
  size_t count;
  bool inPlace;
};

// Three calls of different types, ops and sizes; the last in place.
const std::vector<Planned> kThreeCalls = {{spcclFloat32, spcclSum, 37, false},
                                          {spcclBfloat16, spcclAvg, 1000, false},
                                          {spcclInt64, spcclMax, 5, true}};

// A call's buffers on this rank: device memory holding inputOf(rank).
struct CallBuffers {
  CallBuffers(int rank, const Planned& p)
      : send(p.count * typeBytes(p.type)), recvStorage(p.count * typeBytes(p.type)) {
    send.set(inputOf(rank, p.type, p.count));
  }
  const DeviceBytes& recv(const Planned& p) const { return p.inPlace ? send : recvStorage; }
  DeviceBytes send, recvStorage;
};

// The number in this rank's "N all-reduce calls ran device-resident" line
// of the staging report, printed on stderr by spcclCommDestroy (0: none).
// Destroys comm.
uint64_t destroyAndCountDeviceResident(spcclComm_t comm) {
  char path[] = "/tmp/spccl_device_group_XXXXXX";
  const int file = mkstemp(path);
  const int saved = dup(2);
  fflush(stderr);
  dup2(file, 2);
  spcclCommDestroy(comm);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(file);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  std::smatch match;
  static const std::regex kLine("([0-9]+) all-reduce calls ran device-resident");
  return std::regex_search(text, match, kLine) ? std::stoull(match[1]) : 0;
}

// body on n forked ranks; each rank's staging report must count
// `deviceResident` calls.
void runCountingRanks(int n, uint64_t deviceResident,
                      const std::function<void(int, spcclComm_t)>& body) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initRank(n, id, rank);
    body(rank, comm);
    EXPECT_EQ(destroyAndCountDeviceResident(comm), deviceResident)
        << "rank " << rank << ": all-reduces counted as device-resident";
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  unsetenv("SPCCL_STAGING_REPORT");
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// The planned calls in one group on `stream`, each checked bit for bit
// against the CPU all-reduce; with devicePath, this rank's kernel ran for
// each call (every count here exceeds the rank, so no block is empty),
// else no kernel ran.
void groupOfAllReduces(spcclComm_t comm, int rank, const std::vector<Planned>& calls, void* stream,
                       bool devicePath) {
  std::vector<std::vector<unsigned char>> expected;
  for (const Planned& p : calls) expected.push_back(reference(comm, rank, p.type, p.op, p.count));
  std::vector<std::unique_ptr<CallBuffers>> buffers;
  for (const Planned& p : calls) buffers.push_back(std::make_unique<CallBuffers>(rank, p));
  const uint64_t before = launches();
  ASSERT_EQ(spcclGroupStart(), spcclSuccess);
  for (size_t k = 0; k < calls.size(); ++k) {
    const Planned& p = calls[k];
    ASSERT_EQ(spcclAllReduce(buffers[k]->send.data(), buffers[k]->recv(p).data(), p.count, p.type,
                             p.op, comm, stream),
              spcclSuccess)
        << spcclGetLastError(comm);
  }
  ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << "rank " << rank << ": " << spcclGetLastError(comm);
  for (size_t k = 0; k < calls.size(); ++k)
    EXPECT_EQ(buffers[k]->recv(calls[k]).get(stream), expected[k])
        << "rank " << rank << ", call " << k << " of the group";
  const uint64_t launched = launches() - before;
  if (devicePath) {
    EXPECT_GE(launched, calls.size()) << "rank " << rank << ": the group was staged";
  } else {
    EXPECT_EQ(launched, 0u) << "rank " << rank << ": a kernel ran";
  }
}

// A group of three all-reduces, on the NULL stream and then on a stream:
// six calls device-resident on every rank.
void threeAllReduces(int n) {
  runCountingRanks(n, 6, [](int rank, spcclComm_t comm) {
    groupOfAllReduces(comm, rank, kThreeCalls, nullptr, true);
    void* stream = emuCudaStreamCreate();
    groupOfAllReduces(comm, rank, kThreeCalls, stream, true);
    emuCudaStreamDestroy(stream);
  });
}

TEST(DeviceGroup, ThreeAllReducesTakeThePathN2) { threeAllReduces(2); }
TEST(DeviceGroup, ThreeAllReducesTakeThePathN3) { threeAllReduces(3); }

// Stream order across the group: each call of the group reads the result
// of the one before it (one buffer, in place), enqueued, then synchronised
// once: 1 doubled three times on two ranks.
TEST(DeviceGroup, ChainedCallsOfAGroupOnAStream) {
  runCountingRanks(2, 3, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    const size_t count = 64;
    DeviceBytes buffer(count * sizeof(float));
    std::vector<unsigned char> ones(count * sizeof(float));
    for (size_t i = 0; i < count; ++i) encode(spcclFloat32, 1, &ones[i * sizeof(float)]);
    buffer.set(ones);
    ASSERT_EQ(spcclGroupStart(), spcclSuccess);
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(
          spcclAllReduce(buffer.data(), buffer.data(), count, spcclFloat32, spcclSum, comm, stream),
          spcclSuccess);
    ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << spcclGetLastError(comm);
    const std::vector<unsigned char> got = buffer.get(stream);
    float last = 0;
    std::memcpy(&last, &got[(count - 1) * sizeof(float)], sizeof(last));
    EXPECT_EQ(last, 8.0f) << "rank " << rank;
    emuCudaStreamDestroy(stream);
  });
}

// SPCCL_DEVICE_ALLREDUCE=0: grouped all-reduces are staged as before.
TEST(DeviceGroup, KnobOffStagesGroupsAsBefore) {
  setenv("SPCCL_DEVICE_ALLREDUCE", "0", 1);
  runCountingRanks(2, 0, [](int rank, spcclComm_t comm) {
    groupOfAllReduces(comm, rank, kThreeCalls, nullptr, false);
  });
  unsetenv("SPCCL_DEVICE_ALLREDUCE");
}

// An all-reduce and a broadcast in one group: staged as one unit, as
// before (no kernel, nothing counted), and right.
TEST(DeviceGroup, AllReduceAndBroadcastStayStaged) {
  runCountingRanks(3, 0, [](int rank, spcclComm_t comm) {
    const size_t count = 50;
    const std::vector<unsigned char> expected = reference(comm, rank, spcclInt32, spcclSum, count);
    DeviceBytes send(count * 4), recv(count * 4), cast(count * 4);
    send.set(inputOf(rank, spcclInt32, count));
    // Non-roots hold their own values, which the broadcast overwrites.
    cast.set(inputOf(rank == 1 ? 7 : rank, spcclInt32, count));
    const uint64_t before = launches();
    ASSERT_EQ(spcclGroupStart(), spcclSuccess);
    ASSERT_EQ(spcclAllReduce(send.data(), recv.data(), count, spcclInt32, spcclSum, comm, nullptr),
              spcclSuccess);
    ASSERT_EQ(spcclBroadcast(cast.data(), cast.data(), count, spcclInt32, 1, comm, nullptr),
              spcclSuccess);
    ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << spcclGetLastError(comm);
    EXPECT_EQ(recv.get(nullptr), expected) << "rank " << rank;
    EXPECT_EQ(cast.get(nullptr), inputOf(7, spcclInt32, count)) << "rank " << rank;
    EXPECT_EQ(launches(), before) << "rank " << rank << ": a kernel ran in a staged group";
  });
}

// One rank's group has host buffers: every rank falls back in every call
// of the group (the per-call agreement), with the right results.
TEST(DeviceGroup, HostBuffersOnOneRankFallBackOnEveryRank) {
  runCountingRanks(2, 0, [](int rank, spcclComm_t comm) {
    if (rank == 0) {
      groupOfAllReduces(comm, rank, kThreeCalls, nullptr, false);
      return;
    }
    std::vector<std::vector<unsigned char>> expected, in, out;
    for (const Planned& p : kThreeCalls) {
      expected.push_back(reference(comm, rank, p.type, p.op, p.count));
      in.push_back(inputOf(rank, p.type, p.count));
      out.emplace_back(in.back().size());
    }
    ASSERT_EQ(spcclGroupStart(), spcclSuccess);
    for (size_t k = 0; k < kThreeCalls.size(); ++k) {
      const Planned& p = kThreeCalls[k];
      void* recv = p.inPlace ? in[k].data() : out[k].data();
      ASSERT_EQ(spcclAllReduce(in[k].data(), recv, p.count, p.type, p.op, comm, nullptr),
                spcclSuccess);
    }
    ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << spcclGetLastError(comm);
    for (size_t k = 0; k < kThreeCalls.size(); ++k)
      EXPECT_EQ(kThreeCalls[k].inPlace ? in[k] : out[k], expected[k]) << "call " << k;
  });
}

// A launch that fails on rank 1 in the group's first call: rank 1's
// spcclGroupEnd returns the driver's error by name, rank 0's names rank
// 1, both at once (the schedule's barrier), not at the 20 s deadline.
TEST(DeviceGroup, FailedLaunchInAGroupFailsEveryRankNamingIt) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 16;
    DeviceBytes a(count * 4), b(count * 4);
    a.set(inputOf(rank, spcclFloat32, count));
    b.set(inputOf(rank, spcclFloat32, count));
    if (rank == 1) emuCudaFailLaunches(1);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(spcclGroupStart(), spcclSuccess);
    EXPECT_EQ(spcclAllReduce(a.data(), a.data(), count, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    EXPECT_EQ(spcclAllReduce(b.data(), b.data(), count, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    const spcclResult_t result = spcclGroupEnd();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = spcclGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(result, spcclSystemError);
      EXPECT_NE(error.find("cuLaunchKernel"), std::string::npos) << error;
    } else {
      EXPECT_EQ(result, spcclRemoteError);
      EXPECT_NE(error.find("rank 1 failed the reduction"), std::string::npos) << error;
    }
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": the failure waited for a deadline";
    return kChildOk;
  });
}

// Ranks whose groups differ (an error of the program): rank 0 groups an
// all-reduce and a broadcast (staged), the others two all-reduces (device
// path). The staged all-reduce's frames do not match the device path's
// agreement: every rank's spcclGroupEnd fails, well before the 20 s
// deadline, and the ranks that see the frames name the mismatch.
void groupsThatDiffer(int n) {
  runOnRanks(n, [](int rank, spcclComm_t comm) {
    const size_t count = 24;
    DeviceBytes a(count * 4), b(count * 4);
    a.set(inputOf(rank, spcclFloat32, count));
    b.set(inputOf(rank, spcclFloat32, count));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(spcclGroupStart(), spcclSuccess);
    EXPECT_EQ(spcclAllReduce(a.data(), a.data(), count, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    if (rank == 0) {
      EXPECT_EQ(spcclBroadcast(b.data(), b.data(), count, spcclFloat32, 0, comm, nullptr),
                spcclSuccess);
    } else {
      EXPECT_EQ(spcclAllReduce(b.data(), b.data(), count, spcclFloat32, spcclSum, comm, nullptr),
                spcclSuccess);
    }
    const spcclResult_t result = spcclGroupEnd();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = spcclGetLastError(comm);
    // spcclInvalidUsage (seen: on every rank, the others through the
    // abort of a rank that saw the frames); spcclRemoteError allowed for a
    // rank that learns of it otherwise.
    EXPECT_TRUE(result == spcclInvalidUsage || result == spcclRemoteError)
        << "rank " << rank << ": " << spcclGetErrorString(result);
    EXPECT_NE(error.find("mismatch"), std::string::npos) << "rank " << rank << ": " << error;
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": " << error;
    return kChildOk;
  });
}

TEST(DeviceGroup, RanksWhoseGroupsDifferFailNamingTheMismatchN2) { groupsThatDiffer(2); }
TEST(DeviceGroup, RanksWhoseGroupsDifferFailNamingTheMismatchN3) { groupsThatDiffer(3); }

}  // namespace

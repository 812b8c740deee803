// Grouped collectives of device buffers (core/device_group.h) against the
// emulated driver, as test_device_all_reduce.cc and
// test_device_collectives.cc run the ungrouped ones:
// forked ranks over real sockets, emulated device memory that peers map
// through IPC handles, cuLaunchKernel running a HOST stand-in of spccl's
// kernel. It proves the group's schedule and agreement, not a GPU.
//
// Whether the path was taken is read two ways: the emulated driver's
// counters (kernel launches, copies through the host), and the counts per
// collective that SPCCL_STAGING_REPORT=1 prints when the communicator
// ends (the figure the GPU stage script checks).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device_collective_shapes.h"
#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"
#include "staging_report.h"

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

using Counts = std::map<std::string, uint64_t>;

// body on n forked ranks; each rank's staging report must count exactly
// `deviceResident` calls per collective (staging_report.h).
void runCountingRanks(int n, const Counts& deviceResident,
                      const std::function<void(int, spcclComm_t)>& body) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(n, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initRank(n, id, rank);
    body(rank, comm);
    StderrCapture report;
    spcclCommDestroy(comm);
    EXPECT_EQ(deviceResidentCounts(report.finish(), rank), deviceResident)
        << "rank " << rank << ": calls counted as device-resident";
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
  runCountingRanks(n, {{"all-reduce", 6}}, [](int rank, spcclComm_t comm) {
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
  runCountingRanks(2, {{"all-reduce", 3}}, [](int rank, spcclComm_t comm) {
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
  runCountingRanks(2, {}, [](int rank, spcclComm_t comm) {
    groupOfAllReduces(comm, rank, kThreeCalls, nullptr, false);
  });
  unsetenv("SPCCL_DEVICE_ALLREDUCE");
}

// An MoE layer's calls in one group: an all-to-all of tokens, another in
// place (through the communicator's scratch), an all-to-allv of uneven
// blocks (rank r sends (r + 2 p) % 4 elements to rank p, 0 for some
// pairs) and an all-reduce, each bit for bit against the CPU collective
// on host buffers; on the path nothing goes through the host and the
// all-reduce's kernel runs.
void moeGroup(spcclComm_t comm, int rank, int n, void* stream) {
  const size_t perPeer = 10, count = 50, ranks = static_cast<size_t>(n);
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;
  size_t sent = 0, received = 0;
  for (int p = 0; p < n; ++p) {
    sendcounts.push_back(static_cast<size_t>(rank + 2 * p) % 4);
    sdispls.push_back(sent);
    sent += sendcounts.back();
    recvcounts.push_back(static_cast<size_t>(p + 2 * rank) % 4);
    rdispls.push_back(received);
    received += recvcounts.back();
  }
  const auto allToAllv = [&](const void* in, void* out, void* on) {
    return spcclAllToAllv(in, sendcounts.data(), sdispls.data(), out, recvcounts.data(),
                          rdispls.data(), spcclFloat64, comm, on);
  };
  // The references: the CPU collectives on host buffers.
  const std::vector<unsigned char> tokens = inputOf(rank, spcclBfloat16, perPeer * ranks);
  const std::vector<unsigned char> blocks = inputOf(rank, spcclFloat64, sent);
  std::vector<unsigned char> swapped(tokens.size()), shuffled(received * 8);
  ASSERT_EQ(spcclAllToAll(tokens.data(), swapped.data(), perPeer, spcclBfloat16, comm, nullptr),
            spcclSuccess);
  ASSERT_EQ(allToAllv(blocks.data(), shuffled.data(), nullptr), spcclSuccess);
  const std::vector<unsigned char> reduced = reference(comm, rank, spcclInt32, spcclSum, count);
  DeviceBytes tokensIn(tokens.size()), tokensOut(tokens.size()), inPlace(tokens.size());
  DeviceBytes blocksIn(blocks.size()), blocksOut(shuffled.size()), send(count * 4), recv(count * 4);
  tokensIn.set(tokens);
  inPlace.set(tokens);
  blocksIn.set(blocks);
  send.set(inputOf(rank, spcclInt32, count));
  const EmuCudaCounters before = now();
  ASSERT_EQ(spcclGroupStart(), spcclSuccess);
  ASSERT_EQ(spcclAllToAll(tokensIn.data(), tokensOut.data(), perPeer, spcclBfloat16, comm, stream),
            spcclSuccess);
  ASSERT_EQ(spcclAllToAll(inPlace.data(), inPlace.data(), perPeer, spcclBfloat16, comm, stream),
            spcclSuccess);
  ASSERT_EQ(allToAllv(blocksIn.data(), blocksOut.data(), stream), spcclSuccess);
  ASSERT_EQ(spcclAllReduce(send.data(), recv.data(), count, spcclInt32, spcclSum, comm, stream),
            spcclSuccess);
  ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << "rank " << rank << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  const Seen seen = since(before);
  EXPECT_EQ(seen.hostCopies, 0u) << "rank " << rank << ": the group was staged";
  EXPECT_GT(seen.launches, 0u) << "rank " << rank << ": the all-reduce's kernel did not run";
  EXPECT_EQ(tokensOut.get(stream), swapped) << "rank " << rank << ", the all-to-all";
  EXPECT_EQ(inPlace.get(stream), swapped) << "rank " << rank << ", the all-to-all in place";
  EXPECT_EQ(blocksOut.get(stream), shuffled) << "rank " << rank << ", the all-to-allv";
  EXPECT_EQ(recv.get(stream), reduced) << "rank " << rank << ", the all-reduce";
}

// The group on the NULL stream and then on a stream: every call of it ran
// device-resident on every rank.
void moeGroupTakesThePath(int n) {
  runCountingRanks(n, {{"all-to-all", 4}, {"all-to-allv", 2}, {"all-reduce", 2}},
                   [n](int rank, spcclComm_t comm) {
                     moeGroup(comm, rank, n, nullptr);
                     void* stream = emuCudaStreamCreate();
                     moeGroup(comm, rank, n, stream);
                     emuCudaStreamDestroy(stream);
                   });
}

TEST(DeviceGroup, AllToAllAllToAllvAndAllReduceTakeThePathN2) { moeGroupTakesThePath(2); }
TEST(DeviceGroup, AllToAllAllToAllvAndAllReduceTakeThePathN3) { moeGroupTakesThePath(3); }

// One call of a mixed group: its shape and whether in place.
struct GroupedShape {
  Shape shape;
  bool inPlace;
};

// FSDP's pattern and the rooted calls in one group: a reduce-scatter of
// gradients (bfloat16, avg), an all-gather of parameters in place, a
// broadcast (a non-root passes no sendbuff) and a reduce (a non-root
// passes no recvbuff), the root being the last rank.
std::vector<GroupedShape> fsdpGroup(int rank, int n) {
  return {{Shape{Coll::ReduceScatter, spcclBfloat16, spcclAvg, 1000, rank, n}, false},
          {Shape{Coll::AllGather, spcclBfloat16, spcclSum, 1000, rank, n}, true},
          {Shape{Coll::Broadcast, spcclFloat32, spcclSum, 37, rank, n}, false},
          {Shape{Coll::Reduce, spcclInt64, spcclMax, 5, rank, n}, false}};
}

// The calls in one group on `stream`, each checked bit for bit against the
// CPU collective; with devicePath, nothing went through the host between
// spcclGroupStart and the stream's end and the reduce-scatter's kernel ran
// on this rank, else (staged) no kernel ran.
void groupOfShapes(spcclComm_t comm, const std::vector<GroupedShape>& calls, void* stream,
                   bool devicePath) {
  const int rank = calls.front().shape.rank;
  std::vector<std::vector<unsigned char>> expected;
  for (const GroupedShape& c : calls) expected.push_back(reference(c.shape, comm));
  std::vector<std::unique_ptr<ShapeBuffers>> buffers;
  for (const GroupedShape& c : calls)
    buffers.push_back(std::make_unique<ShapeBuffers>(c.shape, c.inPlace));
  const EmuCudaCounters before = now();
  ASSERT_EQ(spcclGroupStart(), spcclSuccess);
  for (size_t k = 0; k < calls.size(); ++k)
    ASSERT_EQ(callOn(calls[k].shape, buffers[k]->send(), buffers[k]->recv(), comm, stream),
              spcclSuccess)
        << spcclGetLastError(comm);
  ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << "rank " << rank << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  const Seen seen = since(before);
  if (devicePath) {
    EXPECT_EQ(seen.hostCopies, 0u) << "rank " << rank << ": the group was staged";
    EXPECT_GT(seen.launches, 0u) << "rank " << rank << ": no kernel ran";
  } else {
    EXPECT_EQ(seen.launches, 0u) << "rank " << rank << ": a kernel ran in a staged group";
  }
  for (size_t k = 0; k < calls.size(); ++k)
    EXPECT_EQ(buffers[k]->result(stream), expected[k])
        << calls[k].shape.describe(calls[k].inPlace, stream) << ", rank " << rank << ", call " << k
        << " of the group";
}

// The group on the NULL stream and then on a stream: each of its four
// collectives ran device-resident twice on every rank.
void fsdpGroupTakesThePath(int n) {
  const Counts twiceEach = {
      {"reduce-scatter", 2}, {"all-gather", 2}, {"broadcast", 2}, {"reduce", 2}};
  runCountingRanks(n, twiceEach, [n](int rank, spcclComm_t comm) {
    groupOfShapes(comm, fsdpGroup(rank, n), nullptr, true);
    void* stream = emuCudaStreamCreate();
    groupOfShapes(comm, fsdpGroup(rank, n), stream, true);
    emuCudaStreamDestroy(stream);
  });
}

TEST(DeviceGroup, ReduceScatterAllGatherBroadcastReduceTakeThePathN2) { fsdpGroupTakesThePath(2); }
TEST(DeviceGroup, ReduceScatterAllGatherBroadcastReduceTakeThePathN3) { fsdpGroupTakesThePath(3); }

// The same group with a send to the next rank and a receive from the
// previous one: staged as one unit (no kernel, nothing counted), every
// call right, the received bytes those the previous rank sent.
TEST(DeviceGroup, ACollectiveGroupWithASendAndRecvStaysStagedN3) {
  runCountingRanks(3, {}, [](int rank, spcclComm_t comm) {
    const int n = 3, next = (rank + 1) % n, previous = (rank + n - 1) % n;
    const size_t count = 40;
    std::vector<GroupedShape> calls = fsdpGroup(rank, n);
    std::vector<std::vector<unsigned char>> expected;
    for (const GroupedShape& c : calls) expected.push_back(reference(c.shape, comm));
    std::vector<std::unique_ptr<ShapeBuffers>> buffers;
    for (const GroupedShape& c : calls)
      buffers.push_back(std::make_unique<ShapeBuffers>(c.shape, c.inPlace));
    DeviceBytes sent(count * 4), received(count * 4);
    sent.set(inputOf(rank, spcclFloat32, count));
    const uint64_t before = launches();
    ASSERT_EQ(spcclGroupStart(), spcclSuccess);
    ASSERT_EQ(callOn(calls[0].shape, buffers[0]->send(), buffers[0]->recv(), comm, nullptr),
              spcclSuccess);
    ASSERT_EQ(spcclSend(sent.data(), count, spcclFloat32, next, comm, nullptr), spcclSuccess);
    ASSERT_EQ(spcclRecv(received.data(), count, spcclFloat32, previous, comm, nullptr),
              spcclSuccess);
    for (size_t k = 1; k < calls.size(); ++k)
      ASSERT_EQ(callOn(calls[k].shape, buffers[k]->send(), buffers[k]->recv(), comm, nullptr),
                spcclSuccess);
    ASSERT_EQ(spcclGroupEnd(), spcclSuccess) << spcclGetLastError(comm);
    EXPECT_EQ(launches(), before) << "rank " << rank << ": a kernel ran in a staged group";
    for (size_t k = 0; k < calls.size(); ++k)
      EXPECT_EQ(buffers[k]->result(nullptr), expected[k]) << "rank " << rank << ", call " << k;
    EXPECT_EQ(received.get(nullptr), inputOf(previous, spcclFloat32, count)) << "rank " << rank;
  });
}

// One rank's group has host buffers: every rank falls back in every call
// of the group (the per-call agreement), with the right results.
TEST(DeviceGroup, HostBuffersOnOneRankFallBackOnEveryRank) {
  runCountingRanks(2, {}, [](int rank, spcclComm_t comm) {
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

// Ranks whose groups differ (an error of the program). rank0Staged: rank
// 0 groups an all-reduce and a barrier (staged), the others two
// all-reduces (device path); the staged all-reduce's frames do not match
// the device path's agreement. Otherwise every rank's group runs
// device-resident and rank 0's second call is a broadcast where the
// others' is an all-reduce: the broadcast's root agreement meets the
// all-reduce's device-path agreement (seen). Either way every
// rank's spcclGroupEnd fails, well before the 20 s deadline, naming the
// mismatch and the device-path agreement.
void groupsThatDiffer(int n, bool rank0Staged) {
  runOnRanks(n, [rank0Staged](int rank, spcclComm_t comm) {
    const size_t count = 24;
    DeviceBytes a(count * 4), b(count * 4);
    a.set(inputOf(rank, spcclFloat32, count));
    b.set(inputOf(rank, spcclFloat32, count));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(spcclGroupStart(), spcclSuccess);
    EXPECT_EQ(spcclAllReduce(a.data(), a.data(), count, spcclFloat32, spcclSum, comm, nullptr),
              spcclSuccess);
    if (rank == 0 && rank0Staged) {
      EXPECT_EQ(spcclBarrier(comm, nullptr), spcclSuccess);
    } else if (rank == 0) {
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
    // The device path's side named readably (runtime/frame.cc, describe).
    EXPECT_NE(error.find("AllReduce device-path agreement(count=24, float, sum)"),
              std::string::npos)
        << "rank " << rank << ": " << error;
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": " << error;
    return kChildOk;
  });
}

TEST(DeviceGroup, RanksWhoseGroupsDifferFailNamingTheMismatchN2) { groupsThatDiffer(2, true); }
TEST(DeviceGroup, RanksWhoseGroupsDifferFailNamingTheMismatchN3) { groupsThatDiffer(3, true); }
TEST(DeviceGroup, RanksWhoseDeviceGroupsDifferInTheSecondCallFailN2) { groupsThatDiffer(2, false); }
TEST(DeviceGroup, RanksWhoseDeviceGroupsDifferInTheSecondCallFailN3) { groupsThatDiffer(3, false); }

}  // namespace

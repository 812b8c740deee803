// The migration calls of device buffers on a communicator that joins the
// device path (core/device_migrate_call.h) against the emulated driver:
// real ranks (forked processes, real sockets), emulated device memory that
// a peer maps through its IPC handle, cuLaunchKernel running a HOST
// stand-in of spccl's reduce kernel. So this proves the calls' use of the
// schedules (fold, agreement, fallback, barriers, errors), NOT the CUDA
// kernel or a GPU's IPC.
//
// Every result is compared bit for bit with the staged path: the same call
// on host buffers of a second communicator over tcp, which never joins the
// device path (the pipelined chain and the CPU merged all-reduce as
// before). The inputs are small integers, exact in any order; the order
// of the reductions is checked apart with inexact floats. The path taken
// is read from the emulation's counters (on it a call copies nothing
// between host and device) and from the staging report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "device_values.h"
#include "emulated_ranks.h"
#include "rank_failure.h"
#include "spccl.h"
#include "staged_comm.h"
#include "staging_report.h"

using namespace spccl::testing;

namespace {

enum class Kind { Broadcast, Reduce, AllReduce };
constexpr Kind kKinds[] = {Kind::Broadcast, Kind::Reduce, Kind::AllReduce};

const char* nameOf(Kind kind) {
  switch (kind) {
    case Kind::Broadcast:
      return "migrate-broadcast";
    case Kind::Reduce:
      return "migrate-reduce";
    default:
      return "migrate-all-reduce";
  }
}

// Inputs per launch of spccl's reduce kernel: each launch after the first
// reads the output so far as its input 0, then up to 15 more
// (coll/device_reduce_launch.h).
constexpr int kInputsPerLaunch = 16;

// One call; the straggler (broadcast) and dest (reduce) are the last rank.
struct Case {
  Kind kind;
  spcclDataType_t type;
  spcclRedOp_t op;
  size_t count;
  int rank, nranks;
  bool inPlace = false;  // the reduce's: recvbuff = sendbuff on every rank
  int root() const { return nranks - 1; }
  size_t size() const { return spcclTypeSize(type); }
  size_t bytes() const { return count * size(); }
  // The all-reduce's migrated part: [count / 3, + count / 2).
  size_t migratedOffset() const { return count / 3; }
  size_t migratedCount() const { return count / 2; }
  // Whether this rank gets a result (a reduce's non-dest does not).
  bool receives() const { return kind != Kind::Reduce || rank == root(); }
  // The kernel launches of one reduction of every rank's input.
  uint64_t reductionLaunches() const {
    return 1 + static_cast<uint64_t>((nranks - 2) / (kInputsPerLaunch - 1));
  }
  // Whether this rank reduces from a copy of its own input
  // (coll/device_in_place_input.h): in place (the merged all-reduce's
  // all-reduce always is), its input read by a launch after the first.
  bool copiesOwnInput() const {
    const bool reducesInPlace = kind == Kind::AllReduce || (inPlace && rank == root());
    return reducesInPlace && rank >= kInputsPerLaunch;
  }
  std::string describe(const char* how) const {
    return std::string(nameOf(kind)) + " type " + std::to_string(type) + " op " +
           std::to_string(op) + " count " + std::to_string(count) + " on " +
           std::to_string(nranks) + " ranks" + (inPlace ? " in place, " : ", ") + how + ", rank " +
           std::to_string(rank);
  }
};

// A case's inputs on the host: the rank's buffer (the broadcast's on the
// straggler; elsewhere what it holds before), and its migrated part.
struct Inputs {
  std::vector<unsigned char> buffer, migrated;
};

Inputs smallIntegers(const Case& c) {
  const int source = c.kind == Kind::Broadcast && c.rank != c.root() ? c.rank + 11 : c.rank;
  return {inputOf(source, c.type, c.count), inputOf(c.rank + 5, c.type, c.migratedCount())};
}

// The API call of c on buffers `send`, `recv` (the broadcast's buff) and
// `migrated`: blocking on `stream`, or non-blocking and waited for.
spcclResult_t callOn(const Case& c, const void* send, void* recv, const void* migrated,
                     spcclComm_t comm, void* stream, bool nonBlocking = false) {
  spcclRequest_t request = nullptr;
  spcclResult_t res = spcclSuccess;
  switch (c.kind) {
    case Kind::Broadcast:
      res = nonBlocking ? spcclImigrateBroadcast(recv, c.count, c.type, c.root(), comm, &request)
                        : spcclMigrateBroadcast(recv, c.count, c.type, c.root(), comm, stream);
      break;
    case Kind::Reduce:
      res = nonBlocking
                ? spcclImigrateReduce(send, recv, c.count, c.type, c.op, c.root(), comm, &request)
                : spcclMigrateReduce(send, recv, c.count, c.type, c.op, c.root(), comm, stream);
      break;
    default:
      res = nonBlocking ? spcclImigrateAllReduce(send, recv, c.count, migrated, c.migratedCount(),
                                                 c.migratedOffset(), c.type, c.op, comm, &request)
                        : spcclMigrateAllReduce(send, recv, c.count, migrated, c.migratedCount(),
                                                c.migratedOffset(), c.type, c.op, comm, stream);
  }
  return res == spcclSuccess && nonBlocking ? spcclWait(request) : res;
}

// The staged path's result of c on `staged` (a communicator that does not
// join), on host buffers; empty where the rank receives nothing.
std::vector<unsigned char> stagedResult(const Case& c, const Inputs& in, spcclComm_t staged) {
  std::vector<unsigned char> send = in.buffer, recv(c.bytes());
  if (c.kind == Kind::Broadcast) recv = in.buffer;
  std::vector<unsigned char>& out = c.inPlace ? send : recv;
  EXPECT_EQ(callOn(c, send.data(), out.data(), in.migrated.data(), staged, nullptr), spcclSuccess)
      << spcclGetLastError(staged);
  return c.receives() ? out : std::vector<unsigned char>{};
}

// c's buffers in emulated device memory, the inputs in place.
struct DeviceCase {
  DeviceCase(const Case& c, const Inputs& in)
      : send(c.bytes()), recv(c.bytes()), migrated(c.migratedCount() * c.size()) {
    send.set(in.buffer);
    if (c.kind == Kind::Broadcast) recv.set(in.buffer);
    if (!in.migrated.empty()) migrated.set(in.migrated);
  }
  // Where the call writes: sendbuff in place.
  const DeviceBytes& out(const Case& c) const { return c.inPlace ? send : recv; }
  DeviceBytes send, recv, migrated;
};

// The device path's work on this rank: nothing through the host; the
// broadcast's non-straggler copies the straggler's buffer, dest reduces,
// every rank of the all-reduce folds and reduces its block; a rank whose
// own input a later launch reads in place copies it (one copy more).
void expectDevicePath(const Case& c, const Seen& seen, const std::string& what) {
  EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host (staged or fallen back)";
  const uint64_t ownInputCopies = c.copiesOwnInput() ? 1 : 0;
  switch (c.kind) {
    case Kind::Broadcast:
      EXPECT_EQ(seen.copiesOnDevice, c.rank == c.root() ? 0u : 1u) << what;
      EXPECT_EQ(seen.launches, 0u) << what;
      break;
    case Kind::Reduce:
      EXPECT_EQ(seen.launches, c.rank == c.root() ? c.reductionLaunches() : 0u) << what;
      EXPECT_EQ(seen.copiesOnDevice, ownInputCopies) << what;
      break;
    case Kind::AllReduce:
      EXPECT_EQ(seen.launches, 1 + c.reductionLaunches()) << what << ": the fold, then the block";
      // sendbuff around the migrated range, then the peers' blocks.
      EXPECT_EQ(seen.copiesOnDevice, 2u + static_cast<uint64_t>(c.nranks - 1) + ownInputCopies)
          << what;
      break;
  }
}

// One call of c on device buffers, checked bit for bit against the staged
// path and for the path taken.
void checkOne(const Case& c, spcclComm_t comm, spcclComm_t staged, void* stream, bool nonBlocking) {
  const std::string what = c.describe(nonBlocking         ? "spcclI*"
                                      : stream != nullptr ? "a stream"
                                                          : "NULL stream");
  const Inputs in = smallIntegers(c);
  const std::vector<unsigned char> expected = stagedResult(c, in, staged);
  const DeviceCase buffers(c, in);
  const EmuCudaCounters before = now();
  ASSERT_EQ(callOn(c, buffers.send.data(), buffers.out(c).data(), buffers.migrated.data(), comm,
                   stream, nonBlocking),
            spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  expectDevicePath(c, since(before), what);
  if (c.receives()) {
    EXPECT_EQ(buffers.out(c).get(stream), expected) << what;
  }
}

// Each call, f32 and int32, sum and avg, on the NULL stream, a stream and
// in its spcclI* form.
void everyCall(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, n);
    void* stream = emuCudaStreamCreate();
    for (Kind kind : kKinds)
      for (spcclDataType_t type : {spcclFloat32, spcclInt32})
        for (spcclRedOp_t op : {spcclSum, spcclAvg}) {
          if (kind == Kind::Broadcast && op != spcclSum) continue;
          const Case c{kind, type, op, 301, rank, n};
          checkOne(c, comm, staged, nullptr, false);
          checkOne(c, comm, staged, stream, false);
          checkOne(c, comm, staged, nullptr, true);
        }
    emuCudaStreamDestroy(stream);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

TEST(DeviceMigrate, EveryCallStreamNullStreamAndNonBlockingN2) { everyCall(2); }
TEST(DeviceMigrate, EveryCallStreamNullStreamAndNonBlockingN3) { everyCall(3); }

// Inexact floats (no two sums in another order agree): every rank's
// result is the same bits. The broadcast and the reduce equal the staged
// path's (the chain towards the last rank reduces x2 + (x0 + x1), the
// device (x0 + x1) + x2: the same bits, IEEE addition commutes); the
// all-reduce equals the staged path's on 2 ranks and, on 3, its own
// reduction in rank order ((c0 + c1) + c2 per element, c the folded
// contribution) where the CPU ring starts each block at another rank.
void inexactFloats(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, n);
    const size_t count = 257;
    auto valuesOf = [count](int r, float scale) {
      std::vector<unsigned char> bytes(count * sizeof(float));
      for (size_t i = 0; i < count; ++i) {
        const float v = scale * (0.1f * static_cast<float>(r + 1) + 1e-3f * static_cast<float>(i));
        std::memcpy(&bytes[i * sizeof(float)], &v, sizeof(v));
      }
      return bytes;
    };
    for (Kind kind : kKinds) {
      const Case c{kind, spcclFloat32, spcclSum, count, rank, n};
      const std::string what = c.describe("inexact floats");
      Inputs in{valuesOf(rank, rank == 1 ? 1e4f : 1.0f), valuesOf(rank + 7, 3.3f)};
      in.migrated.resize(c.migratedCount() * sizeof(float));
      const std::vector<unsigned char> expected = stagedResult(c, in, staged);
      const DeviceCase buffers(c, in);
      if (callOn(c, buffers.send.data(), buffers.recv.data(), buffers.migrated.data(), comm,
                 nullptr) != spcclSuccess) {
        ADD_FAILURE() << what << ": " << spcclGetLastError(comm);
        continue;
      }
      std::vector<unsigned char> got = buffers.recv.get(nullptr);
      if (!c.receives()) continue;
      if (kind != Kind::AllReduce || n == 2) {
        EXPECT_EQ(got, expected) << what;
      }
      if (kind != Kind::AllReduce) continue;
      // Every rank's contribution, folded as the call does, summed in rank order.
      std::vector<float> sum(count, 0.0f);
      for (int r = 0; r < n; ++r) {
        const std::vector<unsigned char> own = valuesOf(r, r == 1 ? 1e4f : 1.0f);
        const std::vector<unsigned char> part = valuesOf(r + 7, 3.3f);
        for (size_t i = 0; i < count; ++i) {
          float v = 0, m = 0;
          std::memcpy(&v, &own[i * sizeof(float)], sizeof(v));
          const bool folded = i >= c.migratedOffset() && i < c.migratedOffset() + c.migratedCount();
          if (folded) std::memcpy(&m, &part[(i - c.migratedOffset()) * sizeof(float)], sizeof(m));
          sum[i] = r == 0 ? (folded ? v + m : v) : sum[i] + (folded ? v + m : v);
        }
      }
      EXPECT_EQ(0, std::memcmp(got.data(), sum.data(), got.size())) << what << ": rank order";
      // The same bits on every rank.
      std::vector<unsigned char> all(got.size() * static_cast<size_t>(n));
      EXPECT_EQ(spcclAllGather(got.data(), all.data(), got.size(), spcclUint8, staged, nullptr),
                spcclSuccess);
      for (int r = 1; r < n; ++r)
        EXPECT_EQ(0, std::memcmp(all.data(), all.data() + got.size() * r, got.size()))
            << what << ": rank " << r << " differs from rank 0";
    }
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

TEST(DeviceMigrate, InexactFloatsSameBitsOnEveryRankN2) { inexactFloats(2); }
TEST(DeviceMigrate, InexactFloatsSameBitsOnEveryRankN3) { inexactFloats(3); }

// More ranks than one launch of the reduce kernel takes: in place, rank 16
// reduces from a copy of its own input in the communicator's device
// scratch, which the call reserves on the caller's thread (deviceCallOf,
// core/device_collective_call.h).
constexpr int kManyRanks = kInputsPerLaunch + 1;

// The merged all-reduce (its all-reduce is in place) and the reduce in
// place at dest 16, blocking on the NULL stream and a stream and in the
// spcclI* forms: the device path, rank 16 copying its own input, with the
// staged path's bits. Each call needs more scratch on rank 16 than the
// calls before it left (the scratch only grows, at least doubling), so
// each takes the path on its own reservation.
TEST(DeviceMigrate, InPlaceReductionsTakeThePathN17) {
  runOnRanks(kManyRanks, [](int rank, spcclComm_t comm) {
    const int n = kManyRanks;
    spcclComm_t staged = stagedComm(comm, rank, n);
    void* stream = emuCudaStreamCreate();
    struct Call {
      Case c;
      void* stream;
      bool nonBlocking;
    };
    // The all-reduces' counts are multiples of n: rank 16's block is count / n.
    const Call calls[] = {
        {{Kind::AllReduce, spcclFloat32, spcclSum, 8 * n, rank, n}, nullptr, false},
        {{Kind::Reduce, spcclFloat32, spcclSum, 40, rank, n, true}, nullptr, false},
        {{Kind::AllReduce, spcclInt32, spcclSum, 48 * n, rank, n}, stream, false},
        {{Kind::Reduce, spcclInt32, spcclSum, 100, rank, n, true}, stream, false},
        {{Kind::AllReduce, spcclFloat32, spcclAvg, 200 * n, rank, n}, nullptr, true},
        {{Kind::Reduce, spcclInt32, spcclAvg, 400, rank, n, true}, nullptr, true}};
    size_t reserved = 0;  // rank 16's scratch as PeerReadableScratch::reserve grows it
    for (const Call& call : calls) {
      const Case& c = call.c;
      const size_t needed = c.kind == Kind::AllReduce ? c.bytes() / c.nranks : c.bytes();
      EXPECT_GT(needed, reserved) << c.describe("the test's order")
                                  << ": an earlier call's scratch";
      reserved = std::max(needed, 2 * reserved);
      checkOne(c, comm, staged, call.stream, call.nonBlocking);
    }
    emuCudaStreamDestroy(stream);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

// Rank 16's scratch cannot be had (its cuMemAlloc fails as the merged
// all-reduce is called): every rank folds on the device, then every rank
// falls back in the all-reduce, with the staged path's result; the next
// call reserves it and takes the path.
TEST(DeviceMigrate, FailedScratchReservationFallsBackOnEveryRankN17) {
  runOnRanks(kManyRanks, [](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, kManyRanks);
    const Case c{Kind::AllReduce, spcclInt32, spcclSum, 4 * kManyRanks, rank, kManyRanks};
    const std::string what = c.describe("rank 16 had no scratch");
    const Inputs in = smallIntegers(c);
    const std::vector<unsigned char> expected = stagedResult(c, in, staged);
    const DeviceCase buffers(c, in);
    if (rank == kInputsPerLaunch) emuCudaFailMemAllocs(1);
    const EmuCudaCounters before = now();
    EXPECT_EQ(
        callOn(c, buffers.send.data(), buffers.recv.data(), buffers.migrated.data(), comm, nullptr),
        spcclSuccess)
        << what << ": " << spcclGetLastError(comm);
    const Seen seen = since(before);
    EXPECT_EQ(seen.launches, 1u) << what << ": the fold only";
    EXPECT_EQ(seen.copiesOnDevice, 2u) << what << ": sendbuff around the migrated range only";
    EXPECT_GT(seen.hostCopies, 0u) << what << ": not fallen back";
    EXPECT_EQ(buffers.recv.get(nullptr), expected) << what;
    checkOne(c, comm, staged, nullptr, false);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

// SPCCL_STAGING_REPORT=1: each rank's report has one line per migration
// call that ran device-resident (3 of each kind per rank, a scatter and a
// gather).
TEST(DeviceMigrate, StagingReportCountsEachKind) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(2, [](int rank, const spcclUniqueId& id) {
    std::map<std::string, uint64_t> counts;
    std::string report;
    {
      StderrCapture capture;
      spcclComm_t comm = initRank(2, id, rank);
      spcclComm_t staged = stagedComm(comm, rank, 2);
      for (Kind kind : kKinds)
        for (int k = 0; k < 3; ++k)
          checkOne(Case{kind, spcclInt32, spcclSum, 64, rank, 2}, comm, staged, nullptr, k == 2);
      // A scatter and a gather, rank 1 the root (spcclScatter, spcclGather).
      DeviceBytes blocks(2 * 64 * sizeof(int32_t)), block(64 * sizeof(int32_t));
      EXPECT_EQ(spcclScatter(blocks.data(), block.data(), 64, spcclInt32, 1, comm, nullptr),
                spcclSuccess);
      EXPECT_EQ(spcclGather(block.data(), blocks.data(), 64, spcclInt32, 1, comm, nullptr),
                spcclSuccess);
      spcclCommDestroy(staged);
      spcclCommDestroy(comm);
      report = capture.finish();
    }
    const std::map<std::string, uint64_t> expected = {{"gather", 1},
                                                      {"migrate-all-reduce", 3},
                                                      {"migrate-broadcast", 3},
                                                      {"migrate-reduce", 3},
                                                      {"scatter", 1}};
    EXPECT_EQ(deviceResidentCounts(report, rank), expected) << report;
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  unsetenv("SPCCL_STAGING_REPORT");
  for (const auto& outcome : outcomes) EXPECT_EQ(outcome.status, kChildOk);
}

// Rank 0 passes host buffers (or, for the all-reduce, only a host
// `migrated`): every rank falls back in the same call, with the staged
// path's result; nothing moves between devices.
void hostOnRankZero(bool onlyMigrated) {
  runOnRanks(3, [onlyMigrated](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, 3);
    for (Kind kind : kKinds) {
      if (onlyMigrated && kind != Kind::AllReduce) continue;
      const Case c{kind, spcclFloat32, spcclSum, 120, rank, 3};
      const std::string what = c.describe(onlyMigrated ? "host migrated on rank 0" : "host rank 0");
      const Inputs in = smallIntegers(c);
      const std::vector<unsigned char> expected = stagedResult(c, in, staged);
      const DeviceCase buffers(c, in);
      std::vector<unsigned char> send = in.buffer, recv = in.buffer, migrated = in.migrated;
      const bool host = rank == 0 && !onlyMigrated;
      const EmuCudaCounters before = now();
      if (callOn(c, host ? send.data() : buffers.send.data(),
                 host ? recv.data() : buffers.recv.data(),
                 rank == 0 ? migrated.data() : buffers.migrated.data(), comm,
                 nullptr) != spcclSuccess) {
        ADD_FAILURE() << what << ": " << spcclGetLastError(comm);
        continue;
      }
      const Seen seen = since(before);
      // A rank that folded on the device launched the fold and copied
      // sendbuff around it, and no more: no peer's buffer was read.
      const bool foldedOnDevice = kind == Kind::AllReduce && rank != 0;
      EXPECT_EQ(seen.launches, foldedOnDevice ? 1u : 0u) << what;
      EXPECT_EQ(seen.copiesOnDevice, foldedOnDevice ? 2u : 0u) << what;
      if (c.receives()) {
        EXPECT_TRUE(host || seen.hostCopies > 0) << what << ": not fallen back";
        EXPECT_EQ(host ? recv : buffers.recv.get(nullptr), expected) << what;
      }
    }
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

TEST(DeviceMigrate, HostBuffersOnOneRankFallBackOnEveryRankN3) { hostOnRankZero(false); }
TEST(DeviceMigrate, HostMigratedOnOneRankFallsBackOnEveryRankN3) { hostOnRankZero(true); }

// The all-reduce's `migrated` in device memory of another device than
// sendbuff and recvbuff (rank r's buffers on emulated device r, migrated
// on r + 1): the fold's kernel has no peer access to it, so the rank folds
// staged (no launch) and every rank has the staged path's result.
TEST(DeviceMigrate, MigratedOnAnotherDeviceIsStagedN3) {
  runOnThreeDevices(nullptr, [](int rank, spcclComm_t comm, void* stream) {
    spcclComm_t staged = stagedComm(comm, rank, 3);
    const Case c{Kind::AllReduce, spcclFloat32, spcclSum, 120, rank, 3};
    const std::string what = c.describe("migrated on another device");
    const Inputs in = smallIntegers(c);
    const std::vector<unsigned char> expected = stagedResult(c, in, staged);
    const DeviceCase buffers(c, in);
    ASSERT_EQ(emuCudaSetCurrentDevice((rank + 1) % 3), 0);
    DeviceBytes elsewhere(in.migrated.size());
    ASSERT_EQ(emuCudaSetCurrentDevice(rank), 0);
    elsewhere.set(in.migrated);
    const EmuCudaCounters before = now();
    ASSERT_EQ(callOn(c, buffers.send.data(), buffers.recv.data(), elsewhere.data(), comm, stream),
              spcclSuccess)
        << what << ": " << spcclGetLastError(comm);
    cuStreamSynchronize(stream);
    EXPECT_EQ(since(before).launches, 0u) << what << ": a kernel ran";
    EXPECT_EQ(buffers.recv.get(stream), expected) << what;
    spcclCommDestroy(staged);
  });
}

// A kernel launch that fails on rank 1 (dest; in the all-reduce, its
// fold): rank 1 fails with the driver's error by name, rank 0 names rank 1.
void failedLaunch(Kind kind, const char* step) {
  runOnRanks(2, [kind, step](int rank, spcclComm_t comm) {
    const Case c{kind, spcclFloat32, spcclSum, 16, rank, 2};
    const DeviceCase buffers(c, smallIntegers(c));
    if (rank == 1) emuCudaFailLaunches(1);
    const TimedResult got = timedCall(comm, [&] {
      return callOn(c, buffers.send.data(), buffers.recv.data(), buffers.migrated.data(), comm,
                    nullptr);
    });
    expectFailedOnEveryRank(rank, 1, got, "cuLaunchKernel");
    if (rank == 0) {
      EXPECT_EQ(got.result, spcclRemoteError) << got.error;
      EXPECT_NE(got.error.find(std::string("rank 1 failed ") + step), std::string::npos)
          << got.error;
    }
    return kChildOk;
  });
}

TEST(DeviceMigrate, FailedLaunchInReduceFailsEveryRankNamingIt) {
  failedLaunch(Kind::Reduce, "the reduction");
}
TEST(DeviceMigrate, FailedFoldInAllReduceFailsEveryRankNamingIt) {
  failedLaunch(Kind::AllReduce, "the fold of migrated");
}

// Ranks that pass different stragglers fail together, the error naming
// the argument as the staged call does; the communicator stays usable.
TEST(DeviceMigrate, StragglerMismatchFailsEveryRankNamingTheArgument) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const Case c{Kind::Broadcast, spcclInt32, spcclSum, 16, rank, 2};
    const DeviceCase buffers(c, smallIntegers(c));
    EXPECT_EQ(spcclMigrateBroadcast(buffers.recv.data(), c.count, c.type, rank, comm, nullptr),
              spcclInvalidUsage);
    const std::string error = spcclGetLastError(comm);
    EXPECT_NE(error.find("straggler mismatch"), std::string::npos) << error;
    EXPECT_EQ(spcclMigrateBroadcast(buffers.recv.data(), c.count, c.type, 1, comm, nullptr),
              spcclSuccess)
        << spcclGetLastError(comm);
    return kChildOk;
  });
}

}  // namespace

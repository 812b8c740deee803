// The sparse all-reduce API with real processes: argument errors name the
// argument, and bad input or mismatched calls on one rank fail the call on
// every rank quickly (the agreement round), never a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

spcclComm_t singleRankComm() {
  spcclUniqueId id;
  EXPECT_EQ(spcclGetUniqueId(&id), spcclSuccess);
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.profileLinks = 0;
  spcclComm_t comm = nullptr;
  EXPECT_EQ(spcclCommInitRankConfig(&comm, 1, id, 0, &config), spcclSuccess);
  return comm;
}

void expectFailure(spcclResult_t result, spcclResult_t code, spcclComm_t comm,
                   const char* mentions) {
  EXPECT_EQ(result, code) << mentions;
  std::string message = spcclGetLastError(comm);
  EXPECT_NE(message.find(mentions), std::string::npos) << "message: " << message;
}

bool mentions(spcclComm_t comm, const char* text) {
  return std::string(spcclGetLastError(comm)).find(text) != std::string::npos;
}

void expectAllExitedOk(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_FALSE(outcomes[r].timedOut) << "rank " << r << " hung";
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r;
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  }
}

TEST(SparseApi, InvalidArgumentsNameTheArgument) {
  spcclComm_t comm = singleRankComm();
  ASSERT_NE(comm, nullptr);
  float x[8] = {0, 1, 0, 2, 0, 0, 3, 0}, y[8];
  const uint64_t goodIdx[3] = {1, 3, 6}, badIdx[3] = {1, 100, 6};
  const float vals[3] = {1, 2, 3};
  expectFailure(spcclSparseAllReduce(x, y, 8, spcclFloat32, spcclProd, comm, nullptr),
                spcclInvalidArgument, comm, "op prod");
  expectFailure(spcclSparseAllReduce(x, y, 8, spcclFloat32, spcclMax, comm, nullptr),
                spcclInvalidArgument, comm, "only for sum and avg");
  expectFailure(spcclSparseAllReduce(x, nullptr, 8, spcclFloat32, spcclSum, comm, nullptr),
                spcclInvalidArgument, comm, "recvbuff");
  expectFailure(spcclSparseAllReduce(x, y, SIZE_MAX, spcclFloat32, spcclSum, comm, nullptr),
                spcclInvalidArgument, comm, "overflows");
  expectFailure(spcclSparseAllReduceCoo(badIdx, spcclIndexUint64, vals, 3, 8, spcclFloat32,
                                        spcclSum, y, nullptr, comm, nullptr),
                spcclInvalidArgument, comm, "indices[1] = 100");
  expectFailure(spcclSparseAllReduceCoo(goodIdx, static_cast<spcclIndexType_t>(7), vals, 3, 8,
                                        spcclFloat32, spcclSum, y, nullptr, comm, nullptr),
                spcclInvalidArgument, comm, "indexType 7");
  expectFailure(spcclSparseAllReduceCoo(nullptr, spcclIndexUint64, vals, 3, 8, spcclFloat32,
                                        spcclSum, y, nullptr, comm, nullptr),
                spcclInvalidArgument, comm, "indices is NULL");
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.magic = 7;
  expectFailure(
      spcclSparseAllReduceWithOptions(x, y, 8, spcclFloat32, spcclSum, &options, comm, nullptr),
      spcclInvalidArgument, comm, "magic");
  options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.algorithm = static_cast<spcclSparseAlgorithm_t>(99);
  expectFailure(
      spcclSparseAllReduceWithOptions(x, y, 8, spcclFloat32, spcclSum, &options, comm, nullptr),
      spcclInvalidArgument, comm, "algorithm 99");
  size_t outNnz = 0;
  expectFailure(
      spcclSparseAllReduceCooToCoo(goodIdx, spcclIndexUint64, vals, 3, 8, spcclFloat32, spcclSum,
                                   nullptr, nullptr, 4, &outNnz, nullptr, comm, nullptr),
      spcclInvalidArgument, comm, "outIndices");
  // A valid call still works after all of that.
  ASSERT_EQ(spcclSparseAllReduce(x, y, 8, spcclFloat32, spcclSum, comm, nullptr), spcclSuccess);
  EXPECT_EQ(0, std::memcmp(x, y, sizeof(x)));
  EXPECT_EQ(spcclCommDestroy(comm), spcclSuccess);
}

// A caller built against an older, smaller options struct: fields past its
// size are never read (here: garbage in encoding and partitioner).
TEST(SparseApi, OlderSmallerOptionsStructIsAccepted) {
  spcclComm_t comm = singleRankComm();
  ASSERT_NE(comm, nullptr);
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.size = offsetof(spcclSparseOptions_t, tag) + sizeof(options.tag);
  options.algorithm = spcclSparseHierarchical;
  options.tag = 5;
  options.encoding = static_cast<spcclSparseEncoding_t>(1234);
  options.partitioner = static_cast<spcclSparsePartitioner_t>(-5);
  int32_t x[4] = {0, 7, 0, -2}, y[4];
  ASSERT_EQ(spcclSparseAllReduceWithOptions(x, y, 4, spcclInt32, spcclSum, &options, comm, nullptr),
            spcclSuccess)
      << spcclGetLastError(comm);
  EXPECT_EQ(0, std::memcmp(x, y, sizeof(x)));
  spcclSparseStats_t stats;
  stats.size = sizeof(stats);
  ASSERT_EQ(spcclSparseGetStats(comm, 5, &stats), spcclSuccess);
  EXPECT_EQ(stats.calls, 1u);
  EXPECT_EQ(stats.algorithm, spcclSparseHierarchical);
  stats.size = 4;
  expectFailure(spcclSparseGetStats(comm, 5, &stats), spcclInvalidArgument, comm, "too small");
  EXPECT_EQ(spcclCommDestroy(comm), spcclSuccess);
}

// One rank's bad index: it gets spcclInvalidArgument, every other rank
// spcclInvalidUsage naming it, at once; the communicator stays usable.
TEST(SparseApi, BadIndexOnOneRankFailsEveryRankQuickly) {
  auto outcomes = forkRanks(3, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(3, id, rank, 20000);
    const uint64_t indices[2] = {2, rank == 1 ? 64u : 5u};
    const int32_t values[2] = {1, 1};
    int32_t out[16];
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclSparseAllReduceCoo(indices, spcclIndexUint64, values, 2, 16,
                                                spcclInt32, spcclSum, out, nullptr, comm, nullptr);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) return kChildTooSlow;
    if (rank == 1 && (res != spcclInvalidArgument || !mentions(comm, "indices[1] = 64")))
      return kChildWrongResult;
    if (rank != 1 && (res != spcclInvalidUsage || !mentions(comm, "rank 1")))
      return kChildWrongResult;
    const uint64_t good[1] = {3};
    if (spcclSparseAllReduceCoo(good, spcclIndexUint64, values, 1, 16, spcclInt32, spcclSum, out,
                                nullptr, comm, nullptr) != spcclSuccess ||
        out[3] != 3)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  expectAllExitedOk(outcomes);
}

// Ranks asking for different algorithms: spcclInvalidUsage naming the rank,
// on every rank, and the communicator stays usable.
TEST(SparseApi, MismatchedAlgorithmFailsEveryRank) {
  auto outcomes = forkRanks(3, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(3, id, rank, 20000);
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    options.algorithm = rank == 2 ? spcclSparseHierarchical : spcclSparseBalancedParallelism;
    float x[32] = {}, y[32];
    x[rank] = 1;
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res =
        spcclSparseAllReduceWithOptions(x, y, 32, spcclFloat32, spcclSum, &options, comm, nullptr);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) return kChildTooSlow;
    if (res != spcclInvalidUsage || !mentions(comm, "rank 2") || !mentions(comm, "algorithm"))
      return kChildWrongResult;
    options.algorithm = spcclSparseAuto;
    if (spcclSparseAllReduceWithOptions(x, y, 32, spcclFloat32, spcclSum, &options, comm,
                                        nullptr) != spcclSuccess ||
        y[0] != 1 || y[1] != 1 || y[2] != 1)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  expectAllExitedOk(outcomes);
}

// Different counts: the frames' signatures differ, every rank fails (the
// engine reports the mismatch), none waits for its deadline.
TEST(SparseApi, MismatchedCountFailsEveryRankQuickly) {
  auto outcomes = forkRanks(3, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(3, id, rank, 20000);
    std::vector<float> x(64, 0.0f), y(64);
    x[5] = 1;
    const size_t count = rank == 0 ? 48 : 64;
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res =
        spcclSparseAllReduce(x.data(), y.data(), count, spcclFloat32, spcclSum, comm, nullptr);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) return kChildTooSlow;
    if (res == spcclSuccess) return kChildUnexpectedSuccess;
    if (res != spcclInvalidUsage && res != spcclRemoteError) return kChildWrongResult;
    spcclCommAbort(comm);
    return kChildOk;
  });
  expectAllExitedOk(outcomes);
}

// The planner's CPU term (cpu_calibration.h) is agreed by every rank: a
// bad SPCCL_SPARSE_CPU_NS_PER_PAIR on one rank fails every rank quickly,
// naming that rank; a slow CPU (every rank says 1 us per pair) steers auto
// from a sparse schedule to dense, and 0 leaves the links' choice alone.
TEST(SparseApi, CpuTermIsAgreedAndSteersAuto) {
  auto outcomes = forkRanks(3, [](int rank, const spcclUniqueId& id) {
    if (rank == 1) setenv("SPCCL_SPARSE_CPU_NS_PER_PAIR", "fast", 1);
    spcclComm_t comm = initOrExit(3, id, rank, 20000);
    const size_t count = 1 << 20;
    std::vector<float> x(count, 0.0f), y(count);
    for (size_t i = static_cast<size_t>(rank); i < count; i += 20) x[i] = 1.0f;  // d = 5 %
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclSparseAllReduceWithOptions(x.data(), y.data(), count, spcclFloat32,
                                                        spcclSum, &options, comm, nullptr);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) return kChildTooSlow;
    if (res != spcclInvalidArgument || !mentions(comm, "SPCCL_SPARSE_CPU_NS_PER_PAIR on rank 1"))
      return kChildWrongResult;
    if (rank == 1 && !mentions(comm, "fast")) return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  expectAllExitedOk(outcomes);

  for (const char* nsPerPair : {"0", "1000"}) {
    outcomes = forkRanks(3, [nsPerPair](int rank, const spcclUniqueId& id) {
      setenv("SPCCL_SPARSE_CPU_NS_PER_PAIR", nsPerPair, 1);
      spcclComm_t comm = initOrExit(3, id, rank, 20000);
      const size_t count = 1 << 20;
      std::vector<float> x(count, 0.0f), y(count);
      for (size_t i = static_cast<size_t>(rank); i < count; i += 20) x[i] = 1.0f;
      spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
      options.tag = 3;
      if (spcclSparseAllReduceWithOptions(x.data(), y.data(), count, spcclFloat32, spcclSum,
                                          &options, comm, nullptr) != spcclSuccess ||
          y[0] != 1 || y[2] != 1 || y[3] != 0)
        return kChildWrongResult;
      spcclSparseStats_t stats;
      std::memset(&stats, 0, sizeof(stats));
      stats.size = sizeof(stats);
      if (spcclSparseGetStats(comm, 3, &stats) != spcclSuccess) return kChildWrongResult;
      const bool slowCpu = std::strcmp(nsPerPair, "0") != 0;
      const bool dense = stats.algorithm == spcclSparseDense;
      const char* why = slowCpu ? "links and CPU" : "links only";
      if (dense != slowCpu || std::strstr(stats.reason, why) == nullptr) {
        std::fprintf(stderr, "rank %d, %s ns per pair: algorithm %d, %s\n", rank, nsPerPair,
                     static_cast<int>(stats.algorithm), stats.reason);
        return kChildWrongResult;
      }
      spcclCommDestroy(comm);
      return kChildOk;
    });
    expectAllExitedOk(outcomes);
  }
}

// Issue 3: bytes on the wire within 10 % of the formula. HC's Eq. (2) needs
// gamma at every stage; from the second call of a tag it uses the stage
// sizes every rank saw in the first (planner.h), so the prediction matches.
TEST(SparseApi, HierarchicalPredictsItsBytesFromTheSecondCall) {
  auto outcomes = forkRanks(8, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(8, id, rank, 20000);
    // Every rank's 3000 non-zeros drawn from a pool of 10000 positions: the
    // union grows concavely (1, 1.7, 2.5 sets at stages 0-2), far from the
    // interpolated gamma(k) (1, 1.3, 1.9), which would predict ~20 % less.
    const size_t count = 1 << 20;
    std::vector<float> x(count, 0.0f), y(count);
    std::vector<size_t> pool(10000);
    for (size_t i = 0; i < pool.size(); ++i) pool[i] = i * 97;
    std::mt19937_64 random(1000 + rank);
    std::shuffle(pool.begin(), pool.end(), random);
    for (size_t i = 0; i < 3000; ++i) x[pool[i]] = 1.0f;
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    options.algorithm = spcclSparseHierarchical;
    options.tag = 9;
    spcclSparseStats_t stats;
    stats.size = sizeof(stats);
    for (int call = 0; call < 2; ++call)
      if (spcclSparseAllReduceWithOptions(x.data(), y.data(), count, spcclFloat32, spcclSum,
                                          &options, comm, nullptr) != spcclSuccess)
        return kChildWrongResult;
    if (spcclSparseGetStats(comm, 9, &stats) != spcclSuccess) return kChildWrongResult;
    const double ratio = static_cast<double>(stats.predictedBytesSent) / stats.bytesSent;
    if (ratio < 0.9 || ratio > 1.1) {
      std::fprintf(stderr, "rank %d: predicted %llu bytes, sent %llu\n", rank,
                   static_cast<unsigned long long>(stats.predictedBytesSent),
                   static_cast<unsigned long long>(stats.bytesSent));
      return kChildWrongResult;
    }
    spcclCommDestroy(comm);
    return kChildOk;
  });
  expectAllExitedOk(outcomes);
}

}  // namespace

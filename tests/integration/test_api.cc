// The public API with real processes: argument checking, configuration,
// split, non-blocking requests, groups, abort and the traffic counters.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// Runs a single-process scenario in a child (see fork_ranks.h for why the
// test process itself never starts spccl's threads); gtest expectations
// inside it count through the child's exit status.
void inChild(const std::function<void(const spcclUniqueId&)>& scenario) {
  auto outcomes = forkRanks(1, [&scenario](int, const spcclUniqueId& id) {
    scenario(id);
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  EXPECT_EQ(outcomes[0].status, kChildOk) << "see the expectations the child printed above";
}

spcclComm_t singleRankComm(const spcclUniqueId& id) {
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.profileLinks = 0;
  spcclComm_t comm = nullptr;
  EXPECT_EQ(spcclCommInitRankConfig(&comm, 1, id, 0, &config), spcclSuccess);
  return comm;
}

void expectInvalid(spcclResult_t result, spcclComm_t comm, const char* mentions) {
  EXPECT_EQ(result, spcclInvalidArgument) << mentions;
  std::string message = spcclGetLastError(comm);
  EXPECT_NE(message.find(mentions), std::string::npos) << "message: " << message;
}

TEST(Api, InvalidArgumentsNameTheArgument) {
  inChild([](const spcclUniqueId& id) {
    spcclComm_t comm = singleRankComm(id);
    ASSERT_NE(comm, nullptr);
    float x[4] = {1, 2, 3, 4};
    expectInvalid(spcclAllReduce(x, x, 4, spcclFloat32, spcclSum, nullptr, nullptr), nullptr,
                  "comm is NULL");
    expectInvalid(spcclAllReduce(nullptr, x, 4, spcclFloat32, spcclSum, comm, nullptr), comm,
                  "sendbuff");
    expectInvalid(spcclAllReduce(x, nullptr, 4, spcclFloat32, spcclSum, comm, nullptr), comm,
                  "recvbuff");
    expectInvalid(spcclAllReduce(x, x, SIZE_MAX, spcclFloat32, spcclSum, comm, nullptr), comm,
                  "overflows");
    expectInvalid(
        spcclAllReduce(x, x, 4, static_cast<spcclDataType_t>(42), spcclSum, comm, nullptr), comm,
        "datatype 42");
    expectInvalid(
        spcclAllReduce(x, x, 4, spcclFloat32, static_cast<spcclRedOp_t>(9), comm, nullptr), comm,
        "op 9");
    expectInvalid(spcclBroadcast(x, x, 4, spcclFloat32, 5, comm, nullptr), comm, "root 5");
    expectInvalid(spcclReduce(x, x, 4, spcclFloat32, spcclSum, -1, comm, nullptr), comm, "root -1");
    expectInvalid(spcclAllGather(x, x, SIZE_MAX / 2, spcclFloat32, comm, nullptr), comm,
                  "sendcount");
    expectInvalid(spcclSend(x, 4, spcclFloat32, 3, comm, nullptr), comm, "peer 3");
    expectInvalid(spcclRecv(x, 4, spcclFloat32, 0, comm, nullptr), comm, "this rank");
    int stream = 0;
    expectInvalid(spcclAllReduce(x, x, 4, spcclFloat32, spcclSum, comm, &stream), comm, "stream");
    expectInvalid(
        spcclAllToAllv(x, nullptr, nullptr, x, nullptr, nullptr, spcclFloat32, comm, nullptr), comm,
        "sendcounts");
    // A valid call still works after all of that, and clears nothing else.
    EXPECT_EQ(spcclAllReduce(x, x, 4, spcclFloat32, spcclSum, comm, nullptr), spcclSuccess);
    EXPECT_EQ(x[3], 4.0f);
    EXPECT_EQ(spcclCommDestroy(comm), spcclSuccess);
  });
}

TEST(Api, InitRejectsBadRankSizeAndId) {
  inChild([](const spcclUniqueId& id) {
    spcclComm_t comm = nullptr;
    expectInvalid(spcclCommInitRank(&comm, 4, id, 4), nullptr, "rank 4");
    expectInvalid(spcclCommInitRank(&comm, 0, id, 0), nullptr, "nranks 0");
    expectInvalid(spcclCommInitRank(nullptr, 1, id, 0), nullptr, "comm");
    spcclUniqueId zeros;
    std::memset(&zeros, 0, sizeof(zeros));
    expectInvalid(spcclCommInitRank(&comm, 1, zeros, 0), nullptr, "unique id");
    spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
    config.magic = 7;
    expectInvalid(spcclCommInitRankConfig(&comm, 1, id, 0, &config), nullptr, "magic");
    EXPECT_EQ(comm, nullptr);
  });
}

// A caller built against an older, smaller spcclConfig_t: the fields past
// its size are never read.
TEST(Api, OlderSmallerConfigStructIsAccepted) {
  struct OldConfig {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int timeoutMs;
  };
  inChild([](const spcclUniqueId& id) {
    OldConfig old{sizeof(OldConfig), SPCCL_CONFIG_MAGIC, SPCCL_VERSION(0, 0, 1), 5000};
    spcclComm_t comm = nullptr;
    ASSERT_EQ(spcclCommInitRankConfig(&comm, 1, id, 0, reinterpret_cast<spcclConfig_t*>(&old)),
              spcclSuccess);
    int n = 0;
    EXPECT_EQ(spcclCommCount(comm, &n), spcclSuccess);
    EXPECT_EQ(n, 1);
    spcclCommDestroy(comm);
  });
}

TEST(Api, SplitGroupsByColorAndOrdersByKey) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    spcclComm_t sub = nullptr;
    int color = rank == 3 ? SPCCL_SPLIT_NOCOLOR : rank % 2;
    if (spcclCommSplit(comm, color, -rank, &sub, nullptr) != spcclSuccess) {
      std::fprintf(stderr, "rank %d: split failed: %s\n", rank, spcclGetLastError(comm));
      return kChildWrongResult;
    }
    if (rank == 3) return sub == nullptr ? kChildOk : kChildWrongResult;
    int subRank = -1, subSize = 0;
    spcclCommUserRank(sub, &subRank);
    spcclCommCount(sub, &subSize);
    // color 0: ranks {0, 2}, keys {0, -2} -> rank 2 first. color 1: {1}.
    int expectedSize = rank % 2 == 0 ? 2 : 1;
    int expectedRank = rank == 2 ? 0 : rank == 0 ? 1 : 0;
    if (subSize != expectedSize || subRank != expectedRank) {
      std::fprintf(stderr, "rank %d: sub rank %d of %d\n", rank, subRank, subSize);
      return kChildWrongResult;
    }
    int value = rank + 1;
    if (spcclAllReduce(&value, &value, 1, spcclInt32, spcclSum, sub, nullptr) != spcclSuccess)
      return kChildWrongResult;
    int expected = rank % 2 == 0 ? 1 + 3 : 2;
    spcclCommDestroy(sub);
    spcclCommDestroy(comm);
    return value == expected ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

TEST(Api, NonBlockingRequestsCompleteInOrder) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    const size_t count = 1 << 18;
    std::vector<std::vector<int64_t>> buffers(3, std::vector<int64_t>(count));
    std::vector<spcclRequest_t> requests(3);
    for (int k = 0; k < 3; ++k) {
      for (size_t i = 0; i < count; ++i) buffers[k][i] = static_cast<int64_t>(i) * (k + 1) + rank;
      if (spcclIallReduce(buffers[k].data(), buffers[k].data(), count, spcclInt64, spcclSum, comm,
                          &requests[k]) != spcclSuccess)
        return kChildWrongResult;
    }
    int done = 0;
    for (int spins = 0; !done && spins < 100000; ++spins) {
      if (spcclTest(requests[0], &done) != spcclSuccess) return kChildWrongResult;
      if (!done) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (!done) return kChildTooSlow;
    if (spcclWait(requests[1]) != spcclSuccess || spcclWait(requests[2]) != spcclSuccess)
      return kChildWrongResult;
    // A blocking call after non-blocking ones runs after them.
    int64_t one = 1;
    if (spcclAllReduce(&one, &one, 1, spcclInt64, spcclSum, comm, nullptr) != spcclSuccess ||
        one != n)
      return kChildWrongResult;
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < count; ++i)
        if (buffers[k][i] != static_cast<int64_t>(i) * (k + 1) * n + (0 + 1 + 2))
          return kChildWrongResult;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

TEST(Api, GroupedSendRecvRing) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 10000);
    std::vector<int> out(100000, rank), in(100000, -1);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    for (int round = 0; round < 3; ++round) {
      spcclGroupStart();
      spcclSend(out.data(), out.size(), spcclInt32, right, comm, nullptr);
      spcclRecv(in.data(), in.size(), spcclInt32, left, comm, nullptr);
      if (spcclGroupEnd() != spcclSuccess) return kChildWrongResult;
      for (int v : in)
        if (v != left) return kChildWrongResult;
    }
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Rank 0 receives fewer elements than rank 3 sends: an error naming the
// count, not a truncation; the error then reaches every rank.
TEST(Api, SendRecvCountMismatchIsAnError) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 10000);
    std::vector<int> out(1000, rank), in(1000, -1);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    spcclGroupStart();
    spcclSend(out.data(), 1000, spcclInt32, right, comm, nullptr);
    spcclRecv(in.data(), rank == 0 ? 500 : 1000, spcclInt32, left, comm, nullptr);
    spcclResult_t res = spcclGroupEnd();
    if (rank == 0) {
      std::string message = spcclGetLastError(comm);
      if (res != spcclInvalidUsage || message.find("count") == std::string::npos)
        return kChildWrongResult;
    }
    if (spcclBarrier(comm, nullptr) == spcclSuccess) return kChildUnexpectedSuccess;
    spcclCommDestroy(comm);
    return kChildOk;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

TEST(Api, AbortMakesPeersFail) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      spcclCommAbort(comm);
      return kChildOk;
    }
    float x = 1;
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (res != spcclRemoteError) return kChildWrongResult;
    return seconds < 5 ? kChildOk : kChildTooSlow;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Bytes on the wire of a ring all-reduce: 2(n-1)/n of the buffer per rank.
TEST(Api, CountersShowRingTraffic) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    setenv("SPCCL_ALGO", "ring", 1);
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    const size_t count = 1 << 20;
    std::vector<float> data(count, 1.0f);
    spcclCounters_t before{}, after{};
    spcclCommGetCounters(comm, &before);
    if (spcclAllReduce(data.data(), data.data(), count, spcclFloat32, spcclSum, comm, nullptr) !=
        spcclSuccess)
      return kChildWrongResult;
    spcclCommGetCounters(comm, &after);
    uint64_t sent = after.bytesSent - before.bytesSent;
    uint64_t expected = 2 * (n - 1) * count * sizeof(float) / n;
    if (sent != expected) {
      std::fprintf(stderr, "rank %d sent %llu bytes, expected %llu\n", rank,
                   static_cast<unsigned long long>(sent),
                   static_cast<unsigned long long>(expected));
      return kChildWrongResult;
    }
    spcclCommDestroy(comm);
    return data[7] == n ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

}  // namespace

// A stream is a cudaStream_t: in a process that has not loaded the CUDA
// driver no stream can exist, and every data-moving entry point says so,
// naming the argument, instead of handing the pointer to the driver.
TEST(Api, StreamWithoutTheCudaDriverNamesTheStream) {
  inChild([](const spcclUniqueId& id) {
    spcclComm_t comm = singleRankComm(id);
    ASSERT_NE(comm, nullptr);
    void* notAStream = reinterpret_cast<void*>(0x1);
    float x[4] = {1, 2, 3, 4};
    unsigned char mask[2] = {1, 1};
    expectInvalid(spcclAllReduce(x, x, 4, spcclFloat32, spcclSum, comm, notAStream), comm,
                  "stream is not NULL");
    expectInvalid(spcclBroadcast(x, x, 4, spcclFloat32, 0, comm, notAStream), comm,
                  "stream is not NULL");
    expectInvalid(spcclSparseAllReduce(x, x, 4, spcclFloat32, spcclSum, comm, notAStream), comm,
                  "stream is not NULL");
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    expectInvalid(spcclCompressedAllReduce(x, x, 4, spcclFloat32, spcclSum, &cfg, comm, notAStream),
                  comm, "stream is not NULL");
    expectInvalid(spcclTokenMaskAllReduce(x, mask, 2, 2, spcclFloat32, spcclSum, nullptr,
                                          spcclPruneZero, comm, notAStream),
                  comm, "stream is not NULL");
    expectInvalid(
        spcclMigrateAllReduce(x, x, 4, nullptr, 0, 0, spcclFloat32, spcclSum, comm, notAStream),
        comm, "stream is not NULL");
    // The communicator is still usable, and has no asynchronous error.
    EXPECT_EQ(spcclAllReduce(x, x, 4, spcclFloat32, spcclSum, comm, nullptr), spcclSuccess);
    EXPECT_EQ(x[3], 4.0f);
    spcclResult_t asyncError = spcclInternalError;
    EXPECT_EQ(spcclCommGetAsyncError(comm, &asyncError), spcclSuccess);
    EXPECT_EQ(asyncError, spcclSuccess);
    EXPECT_EQ(spcclCommDestroy(comm), spcclSuccess);
  });
}

// Without a CUDA context at init the communicator has no device; the
// queries name their NULL arguments.
TEST(Api, CuDeviceAndAsyncErrorQueries) {
  inChild([](const spcclUniqueId& id) {
    spcclComm_t comm = singleRankComm(id);
    ASSERT_NE(comm, nullptr);
    int device = 7;
    EXPECT_EQ(spcclCommCuDevice(comm, &device), spcclSuccess);
    EXPECT_EQ(device, -1);
    expectInvalid(spcclCommCuDevice(comm, nullptr), nullptr, "device is NULL");
    expectInvalid(spcclCommGetAsyncError(comm, nullptr), nullptr, "asyncError is NULL");
    spcclResult_t asyncError;
    expectInvalid(spcclCommGetAsyncError(nullptr, &asyncError), nullptr, "comm is NULL");
    EXPECT_EQ(spcclCommDestroy(comm), spcclSuccess);
  });
}

// One rank passes a stream that cannot be one: it is told at once, and its
// peer's side of the call fails at once too (withdrawn), not at the deadline.
TEST(Api, BadStreamOnOneRankFailsThePeerPromptly) {
  auto outcomes = forkRanks(2, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(2, id, rank, 20000);
    float x = 1;
    void* stream = rank == 1 ? reinterpret_cast<void*>(0x1) : nullptr;
    const auto start = std::chrono::steady_clock::now();
    const spcclResult_t res = spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, stream);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rank == 1 && (res != spcclInvalidArgument ||
                      std::string(spcclGetLastError(comm)).find("stream") == std::string::npos))
      return kChildWrongResult;
    if (rank == 0 && res == spcclSuccess) return kChildWrongResult;
    return seconds < 10 ? kChildOk : kChildTooSlow;
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// spcclCommAbort from another thread while a call is blocked on the same
// communicator (a watchdog's abort, NCCL's pattern under PyTorch): the
// call returns an error within a bound, the abort returns within a bound,
// and nothing touches the freed communicator (ASan checks that here).
TEST(Api, AbortFromAnotherThreadWhileACallIsBlocked) {
  auto outcomes = forkRanks(2, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(2, id, rank, 30000);
    if (rank == 1) {  // never joins the call; leaves once rank 0 is done
      std::this_thread::sleep_for(std::chrono::seconds(3));
      spcclCommAbort(comm);
      return kChildOk;
    }
    std::vector<float> x(1024, 1.0f);
    spcclResult_t callResult = spcclSuccess;
    double callSeconds = 0;
    const auto start = std::chrono::steady_clock::now();
    std::thread caller([&] {
      callResult =
          spcclAllReduce(x.data(), x.data(), x.size(), spcclFloat32, spcclSum, comm, nullptr);
      callSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto abortStart = std::chrono::steady_clock::now();
    const spcclResult_t aborted = spcclCommAbort(comm);
    const double abortSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - abortStart).count();
    caller.join();
    if (aborted != spcclSuccess || callResult == spcclSuccess) return kChildWrongResult;
    return abortSeconds < 2.0 && callSeconds < 2.5 ? kChildOk : kChildTooSlow;
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

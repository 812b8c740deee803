// A collective call that one rank rejects (its arguments are wrong, and only
// its own) never begins there; the peers must learn it at once, naming that
// rank, instead of waiting for their deadline (Engine::withdraw). A call that
// every rank rejects leaves the communicator usable.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/transport_param.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

constexpr int kRanks = 3;
constexpr int kRejecting = 1;
constexpr int kTimeoutMs = 30000;
constexpr double kFastSeconds = 5.0;  // far below the deadline

class Withdraw : public TransportParamTest {};

// One collective, called right by every rank but kRejecting (bad = true).
struct Rejection {
  const char* name;
  const char* expectedText;  // in the rejecting rank's message, which the peers must quote
  spcclResult_t (*call)(spcclComm_t comm, bool bad, std::vector<float>& buffer);
};

constexpr auto kBadType = static_cast<spcclDataType_t>(99);
constexpr size_t kCount = 4096;

spcclResult_t badRoot(spcclComm_t comm, bool bad, std::vector<float>& b) {
  return spcclBroadcast(b.data(), b.data(), kCount, spcclFloat32, bad ? kRanks + 4 : 0, comm,
                        nullptr);
}
spcclResult_t nullSparseInput(spcclComm_t comm, bool bad, std::vector<float>& b) {
  return spcclSparseAllReduce(bad ? nullptr : b.data(), b.data(), kCount, spcclFloat32, spcclSum,
                              comm, nullptr);
}
spcclResult_t badCompressedType(spcclComm_t comm, bool bad, std::vector<float>& b) {
  const spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  return spcclCompressedAllReduce(b.data(), b.data(), kCount, bad ? kBadType : spcclFloat32,
                                  spcclSum, &cfg, comm, nullptr);
}
spcclResult_t badStraggler(spcclComm_t comm, bool bad, std::vector<float>& b) {
  return spcclMigrateBroadcast(b.data(), kCount, spcclFloat32, bad ? -1 : 2, comm, nullptr);
}
spcclResult_t badAsyncOp(spcclComm_t comm, bool bad, std::vector<float>& b) {
  spcclRequest_t request = nullptr;
  spcclResult_t res =
      spcclIallReduce(b.data(), b.data(), kCount, spcclFloat32,
                      bad ? static_cast<spcclRedOp_t>(77) : spcclSum, comm, &request);
  return res == spcclSuccess ? spcclWait(request) : res;
}
spcclResult_t badSplitColor(spcclComm_t comm, bool bad, std::vector<float>&) {
  spcclComm_t part = nullptr;
  spcclResult_t res = spcclCommSplit(comm, bad ? -5 : 0, 0, &part, nullptr);
  if (part != nullptr) spcclCommDestroy(part);
  return res;
}

// In a group the rejected call is the second all-reduce; the group also
// passes 1 MiB around the ring point to point, so its sends are in flight
// while the all-reduces run. The first all-reduce and the ring run everywhere.
constexpr size_t kRingCount = 1 << 18;
spcclResult_t badSecondInGroup(spcclComm_t comm, bool bad, std::vector<float>& b) {
  int rank = 0, n = 0;
  spcclCommUserRank(comm, &rank);
  spcclCommCount(comm, &n);
  std::vector<float> mine(kRingCount, static_cast<float>(rank)), from(kRingCount, -1.0f);
  spcclGroupStart();
  spcclSend(mine.data(), kRingCount, spcclFloat32, (rank + 1) % n, comm, nullptr);
  spcclRecv(from.data(), kRingCount, spcclFloat32, (rank + n - 1) % n, comm, nullptr);
  spcclResult_t first =
      spcclAllReduce(b.data(), b.data(), kCount, spcclFloat32, spcclSum, comm, nullptr);
  spcclResult_t second = spcclAllReduce(b.data(), bad ? nullptr : b.data(), kCount, spcclFloat32,
                                        spcclSum, comm, nullptr);
  spcclResult_t end = spcclGroupEnd();
  if (end == spcclSuccess)
    for (float v : from)
      if (v != static_cast<float>((rank + n - 1) % n)) return spcclInternalError;  // wrong data
  if (first != spcclSuccess) return first;
  return second != spcclSuccess ? second : end;
}

const Rejection kRejections[] = {
    {"broadcast root", "root 7 is out of range", badRoot},
    {"sparse sendbuff", "sendbuff is NULL", nullSparseInput},
    {"compressed datatype", "datatype 99", badCompressedType},
    {"migration straggler", "straggler -1", badStraggler},
    {"non-blocking op", "op 77", badAsyncOp},
    {"second call of a group", "recvbuff is NULL", badSecondInGroup},
    {"split color", "color -5", badSplitColor},
};

// Rank 0 starts late, so the withdrawal reaches it before it begins the
// call (it must fail there); rank 2 is inside the call when it arrives.
TEST_P(Withdraw, PeersOfARejectingRankFailAtOnceNamingIt) {
  for (const Rejection& r : kRejections) {
    auto outcomes = forkRanks(kRanks, [&r](int rank, const spcclUniqueId& id) {
      spcclComm_t comm = initOrExit(kRanks, id, rank, kTimeoutMs);
      std::vector<float> buffer(kCount, 1.0f);
      if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      auto start = std::chrono::steady_clock::now();
      spcclResult_t res = r.call(comm, rank == kRejecting, buffer);
      std::string message = spcclGetLastError(comm);
      std::fprintf(stderr, "[%s] rank %d after %.2f s: %s (%s)\n", r.name, rank,
                   secondsSince(start), spcclGetErrorString(res), message.c_str());
      if (rank == kRejecting) {
        if (res != spcclInvalidArgument && res != spcclInvalidUsage) return kChildWrongResult;
        // Its peers broke the communicator: its next call fails, and soon.
        start = std::chrono::steady_clock::now();
        res = spcclBarrier(comm, nullptr);
        std::fprintf(stderr, "[%s] rank %d's next call: %s (%s)\n", r.name, rank,
                     spcclGetErrorString(res), spcclGetLastError(comm));
        if (res == spcclSuccess) return kChildUnexpectedSuccess;
        return secondsSince(start) < kFastSeconds ? kChildOk : kChildTooSlow;
      }
      if (res == spcclSuccess) return kChildUnexpectedSuccess;
      if (res != spcclInvalidUsage) return kChildWrongResult;
      if (message.find("rank 1") == std::string::npos ||
          message.find("rejected") == std::string::npos ||
          message.find(r.expectedText) == std::string::npos)
        return kChildWrongResult;
      return secondsSince(start) < kFastSeconds ? kChildOk : kChildTooSlow;
    });
    for (int rank = 0; rank < kRanks; ++rank) {
      EXPECT_TRUE(outcomes[rank].exited) << r.name << " rank " << rank;
      EXPECT_EQ(outcomes[rank].status, kChildOk) << r.name << " rank " << rank;
    }
  }
}

// Every rank rejects the same calls (twice, and once inside a group); the
// ranks stay in step and the next all-reduces give the right sums.
TEST_P(Withdraw, CallsEveryRankRejectsLeaveTheCommunicatorUsable) {
  auto outcomes = forkRanks(kRanks, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(kRanks, id, rank, kTimeoutMs);
    std::vector<float> buffer(kCount, 1.0f);
    for (int i = 0; i < 2; ++i)
      if (badRoot(comm, true, buffer) != spcclInvalidArgument) return kChildWrongResult;
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // Its first all-reduce and its ring ran (checked below and in there).
    if (badSecondInGroup(comm, true, buffer) != spcclInvalidArgument) return kChildWrongResult;
    for (int i = 0; i < 3; ++i) {
      std::vector<float> x(kCount, static_cast<float>(rank + i));
      if (spcclAllReduce(x.data(), x.data(), kCount, spcclFloat32, spcclSum, comm, nullptr) !=
          spcclSuccess) {
        std::fprintf(stderr, "rank %d: %s\n", rank, spcclGetLastError(comm));
        return kChildWrongResult;
      }
      const float expected = static_cast<float>(kRanks * (kRanks - 1) / 2 + kRanks * i);
      for (float v : x)
        if (v != expected) return kChildWrongResult;
    }
    for (float v : buffer)
      if (v != static_cast<float>(kRanks)) return kChildWrongResult;
    return kChildOk;
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(outcomes[rank].exited) << "rank " << rank;
    EXPECT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, Withdraw, ::testing::Values("tcp", "shm", "tcp_lanes"));

}  // namespace

// Failure handling with real processes: dead peers, mismatched collectives,
// timeouts, intruders without the job secret. Every scenario must end in a
// clear error on every rank within the deadline, never a hang.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/fork_ranks.h"
#include "../common/killed_rank.h"
#include "../common/transport_param.h"
#include "core/bootstrap.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

class Faults : public TransportParamTest {};  // tcp, shm, tcp_lanes (common/transport_param.h)

// Rank 1 is SIGKILLed while every rank is inside a large all-reduce; the
// survivors must fail with spcclRemoteError well before the deadline
// (common/killed_rank.h).
TEST_P(Faults, KilledRankMakesOthersFailFast) {
  const int n = 4;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    return allReduceUntilRankKilled(comm, rank, 8 << 20);
  });
  expectSurvivorsFailedFast(outcomes);
}

struct Mismatch {
  const char* name;
  // What rank 2 does differently from the others.
  spcclResult_t (*call)(spcclComm_t comm, bool odd, std::vector<float>& buffer);
};

spcclResult_t countMismatch(spcclComm_t comm, bool odd, std::vector<float>& b) {
  return spcclAllReduce(b.data(), b.data(), odd ? 999 : 1000, spcclFloat32, spcclSum, comm,
                        nullptr);
}
spcclResult_t typeMismatch(spcclComm_t comm, bool odd, std::vector<float>& b) {
  return spcclAllReduce(b.data(), b.data(), 1000, odd ? spcclInt32 : spcclFloat32, spcclSum, comm,
                        nullptr);
}
spcclResult_t opMismatch(spcclComm_t comm, bool odd, std::vector<float>& b) {
  return spcclAllReduce(b.data(), b.data(), 1000, spcclFloat32, odd ? spcclMax : spcclSum, comm,
                        nullptr);
}
spcclResult_t collMismatch(spcclComm_t comm, bool odd, std::vector<float>& b) {
  if (odd)
    return spcclReduceScatter(b.data(), b.data(), 250, spcclFloat32, spcclSum, comm, nullptr);
  return spcclAllReduce(b.data(), b.data(), 1000, spcclFloat32, spcclSum, comm, nullptr);
}
spcclResult_t rootMismatch(spcclComm_t comm, bool odd, std::vector<float>& b) {
  return spcclBroadcast(b.data(), b.data(), 1000, spcclFloat32, odd ? 2 : 0, comm, nullptr);
}

const Mismatch kMismatches[] = {{"count", countMismatch},
                                {"datatype", typeMismatch},
                                {"op", opMismatch},
                                {"collective", collMismatch},
                                {"root", rootMismatch}};

TEST_P(Faults, MismatchedCollectiveFailsOnEveryRank) {
  const int n = 5;
  for (const Mismatch& m : kMismatches) {
    auto outcomes = forkRanks(n, [&m](int rank, const spcclUniqueId& id) {
      spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
      config.timeoutMs = 15000;
      config.profileLinks = 0;
      spcclComm_t comm = nullptr;
      // The others may reach the call, and fail it, while this rank still
      // sets up its connections: it then fails its init, and must be told
      // why (setup_departures.h).
      if (spcclCommInitRankConfig(&comm, n, id, rank, &config) != spcclSuccess) {
        const std::string why = spcclGetLastError(nullptr);
        std::fprintf(stderr, "[%s] rank %d: init failed: %s\n", m.name, rank, why.c_str());
        return why.find("mismatch") != std::string::npos ? kChildOk : kChildInitFailed;
      }
      std::vector<float> buffer(4096, 1.0f);
      spcclResult_t res = m.call(comm, rank == 2, buffer);
      // A rank whose part finished before the mismatch was seen learns of it
      // at its next call: the communicator is in the error state.
      if (res == spcclSuccess) res = spcclBarrier(comm, nullptr);
      if (res == spcclSuccess) return kChildUnexpectedSuccess;
      std::string message = spcclGetLastError(comm);
      std::fprintf(stderr, "[%s] rank %d: %s (%s)\n", m.name, rank, spcclGetErrorString(res),
                   message.c_str());
      if (res != spcclInvalidUsage) return kChildWrongResult;
      if (message.find("mismatch") == std::string::npos) return kChildWrongResult;
      return kChildOk;
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_TRUE(outcomes[r].exited) << m.name << " rank " << r;
      EXPECT_EQ(outcomes[r].status, kChildOk) << m.name << " rank " << r;
    }
  }
}

// Rank 1 never joins the collective: rank 0 times out and names rank 1.
TEST_P(Faults, MissingRankTimesOutWithPeerName) {
  const int n = 2;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 1500);
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(4));
      return kChildOk;
    }
    float x = 1;
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr);
    std::string message = spcclGetLastError(comm);
    std::fprintf(stderr, "rank 0: %s\n", message.c_str());
    if (res != spcclTimeout || message.find("rank 1") == std::string::npos)
      return kChildWrongResult;
    return secondsSince(start) < 3.5 ? kChildOk : kChildTooSlow;
  });
  EXPECT_EQ(outcomes[0].status, kChildOk);
  EXPECT_EQ(outcomes[1].status, kChildOk);
}

// Rank 0 sends rank 1 a message rank 1 does not receive yet, then aborts.
// Rank 1, waiting on rank 2 (which sends nothing), must learn of the abort at
// once: the abort travels on a control connection of its own, not behind
// the unreceived data, where rank 1 would read it only at its deadline.
TEST_P(Faults, AbortBehindUnreceivedDataArrivesAtOnce) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    std::vector<float> data(256, 1.0f);
    if (rank == 0) {
      if (spcclSend(data.data(), data.size(), spcclFloat32, 1, comm, nullptr) != spcclSuccess)
        return kChildWrongResult;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 1 is waiting by now
      spcclCommAbort(comm);
      return kChildOk;
    }
    if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::seconds(6));
      return kChildOk;
    }
    auto start = std::chrono::steady_clock::now();
    spcclResult_t res = spcclRecv(data.data(), data.size(), spcclFloat32, 2, comm, nullptr);
    std::string message = spcclGetLastError(comm);
    std::fprintf(stderr, "rank 1: after %.2f s: %s\n", secondsSince(start), message.c_str());
    if (res != spcclRemoteError || message.find("rank 0") == std::string::npos ||
        message.find("abort") == std::string::npos)
      return kChildWrongResult;
    return secondsSince(start) < 3.0 ? kChildOk : kChildTooSlow;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Rank 0's large send times out before rank 1 receives it; rank 0's call
// returns and it reuses the buffer. Rank 1, receiving afterwards, must get
// an error or the message as sent, never the reused buffer's bytes: over
// shm rank 1 reads the message from rank 0's memory, so the failed call
// must withdraw it (runtime/engine's abort closes the lane).
TEST_P(Faults, SendGivenUpByItsCallIsNeverReadChanged) {
  const int n = 2;
  constexpr size_t kCount = size_t{1} << 20;  // 4 MiB: a remote read on shm
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 1500);
    std::vector<float> data(kCount);
    for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(i % 1000) + 0.5f;
    if (rank == 0) {
      const spcclResult_t sent = spcclSend(data.data(), kCount, spcclFloat32, 1, comm, nullptr);
      std::fprintf(stderr, "rank 0: send returned %d: %s\n", static_cast<int>(sent),
                   sent == spcclSuccess ? "" : spcclGetLastError(comm));
      std::fill(data.begin(), data.end(), -7.0f);            // the buffer reused
      std::this_thread::sleep_for(std::chrono::seconds(3));  // mapped while rank 1 reads
      spcclCommAbort(comm);
      return kChildOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past rank 0's deadline
    std::vector<float> got(kCount, 0.0f);
    const spcclResult_t res = spcclRecv(got.data(), kCount, spcclFloat32, 0, comm, nullptr);
    std::fprintf(stderr, "rank 1: receive returned %d: %s\n", static_cast<int>(res),
                 res == spcclSuccess ? "" : spcclGetLastError(comm));
    spcclCommAbort(comm);
    if (res != spcclSuccess) return kChildOk;
    return got == data ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// A non-blocking call still in flight when its communicator is aborted:
// waiting on its request afterwards reports the abort, and touches nothing
// of the freed communicator (the sanitizer suite catches a use after free).
TEST_P(Faults, RequestWaitedAfterAbortReportsTheAbort) {
  const int n = 2;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(n, id, rank, 20000);
    if (rank == 0) {  // never joins the all-reduce
      std::this_thread::sleep_for(std::chrono::seconds(2));
      spcclCommAbort(comm);
      return kChildOk;
    }
    std::vector<float> data(1 << 16, 1.0f);
    spcclRequest_t pending = nullptr;
    spcclRequest_t queued = nullptr;
    if (spcclIallReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm,
                        &pending) != spcclSuccess ||
        spcclIallReduce(data.data(), data.data(), data.size(), spcclFloat32, spcclSum, comm,
                        &queued) != spcclSuccess)
      return kChildWrongResult;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the first one is running
    spcclCommAbort(comm);
    const spcclResult_t first = spcclWait(pending);
    const spcclResult_t second = spcclWait(queued);
    std::fprintf(stderr, "rank 1: waits after the abort returned %d and %d\n",
                 static_cast<int>(first), static_cast<int>(second));
    return first != spcclSuccess && second != spcclSuccess ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// A process without the job secret is refused by the rendezvous root; the
// real ranks still form their communicator.
TEST_P(Faults, ConnectionWithoutSecretIsRefused) {
  const int n = 3;
  auto outcomes = forkRanks(n, [](int rank, const spcclUniqueId& id) {
    if (rank == 0) {
      spcclUniqueId forged = id;
      spccl::UniqueIdContents contents;
      if (spccl::decodeUniqueId(id, &contents) != spcclSuccess) return kChildWrongResult;
      contents.secret.bytes[0] ^= 0x5a;
      forged = spccl::encodeUniqueId(contents);
      spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
      config.timeoutMs = 3000;
      spcclComm_t intruder = nullptr;
      // The forged rank claims rank 0 with the wrong secret: refused, then times out.
      spcclResult_t res = spcclCommInitRankConfig(&intruder, n, forged, 0, &config);
      if (res == spcclSuccess) return kChildUnexpectedSuccess;
    }
    spcclComm_t comm = initOrExit(n, id, rank, 15000);
    int x = rank + 1;
    if (spcclAllReduce(&x, &x, 1, spcclInt32, spcclSum, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    spcclCommDestroy(comm);
    return x == 6 ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Transports, Faults, ::testing::Values("tcp", "shm", "tcp_lanes"));

}  // namespace

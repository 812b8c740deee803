// A rank whose transport cannot start (here: tcp with SPCCL_SOCKET_IFNAME
// naming no interface on that rank only) still takes part in the
// rendezvous with its reason, so that every rank fails communicator
// creation at once naming it, instead of the others waiting for it until
// their deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/fork_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

constexpr int kRanks = 3;
constexpr int kBroken = 2;
constexpr int kTimeoutMs = 30000;
constexpr double kFastSeconds = 5.0;

int createWithOneRankWithoutInterface(int rank, const spcclUniqueId& id) {
  setenv("SPCCL_TRANSPORT", "tcp", 1);
  if (rank == kBroken) setenv("SPCCL_SOCKET_IFNAME", "=spccl_no_such_if0", 1);
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.timeoutMs = kTimeoutMs;
  config.profileLinks = 0;
  auto start = std::chrono::steady_clock::now();
  spcclComm_t comm = nullptr;
  spcclResult_t res = spcclCommInitRankConfig(&comm, kRanks, id, rank, &config);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string message = spcclGetLastError(nullptr);
  std::fprintf(stderr, "rank %d after %.2f s: %s (%s)\n", rank, seconds, spcclGetErrorString(res),
               message.c_str());
  if (res == spcclSuccess) return kChildUnexpectedSuccess;
  const std::string reason =
      "SPCCL_TRANSPORT=tcp: transport tcp cannot start on this host: no network interface is up "
      "and matches SPCCL_SOCKET_IFNAME='=spccl_no_such_if0'";
  const bool named = rank == kBroken || message.find("rank 2 (host ") != std::string::npos;
  if (res != spcclInvalidArgument || message.find(reason) == std::string::npos || !named)
    return kChildWrongResult;
  return seconds < kFastSeconds ? kChildOk : kChildTooSlow;
}

TEST(TransportStart, OneRankWhoseTransportCannotStartFailsCreationOnEveryRank) {
  auto outcomes = forkRanks(kRanks, createWithOneRankWithoutInterface);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(outcomes[rank].exited) << "rank " << rank;
    EXPECT_EQ(outcomes[rank].status, kChildOk) << "rank " << rank;
  }
}

}  // namespace

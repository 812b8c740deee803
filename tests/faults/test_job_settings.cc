// Settings every rank must share (core/job_settings.h): one rank that sets
// one differently makes communicator creation fail on every rank, at once,
// naming the knob and the rank, where it used to hang until the deadline
// or cut messages differently from its peers.
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
constexpr int kOdd = 2;
constexpr int kTimeoutMs = 30000;
constexpr double kFastSeconds = 5.0;

struct Difference {
  const char* knob;
  const char* oddValue;  // rank kOdd's value (the others keep tcp and the defaults)
};

const Difference kDifferences[] = {
    {"SPCCL_TRANSPORT", "shm"},
    {"SPCCL_ALGO", "ring"},
    {"SPCCL_CHUNK_BYTES", "65536"},
    {"SPCCL_SPARSE_PIECE_BYTES", "0"},
    {"SPCCL_COMPRESS_PIECE_BYTES", "0"},  // the two-shot pieces its owned chunk differently
    {"SPCCL_DEVICE_ALLREDUCE", "0"},
    {"SPCCL_NET_STRIPE_MIN_BYTES", "0"},
    {"SPCCL_CHECK_ROOTS", "0"},
    {"SPCCL_PROFILE_LINKS", "1"},  // through the config, which the others set to 0
    {"SPCCL_WIRE_CHECKSUM", "crc32c"},
};

int createAndExpectTheDifference(const Difference& d, int rank, const spcclUniqueId& id) {
  setenv("SPCCL_TRANSPORT", "tcp", 1);
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.timeoutMs = kTimeoutMs;
  config.profileLinks = 0;
  if (rank == kOdd) {
    if (std::string(d.knob) == "SPCCL_PROFILE_LINKS")
      config.profileLinks = 1;
    else
      setenv(d.knob, d.oddValue, 1);
  }
  auto start = std::chrono::steady_clock::now();
  spcclComm_t comm = nullptr;
  spcclResult_t res = spcclCommInitRankConfig(&comm, kRanks, id, rank, &config);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string message = spcclGetLastError(nullptr);
  std::fprintf(stderr, "[%s] rank %d after %.2f s: %s (%s)\n", d.knob, rank, seconds,
               spcclGetErrorString(res), message.c_str());
  if (res == spcclSuccess) return kChildUnexpectedSuccess;
  if (res != spcclInvalidUsage || message.find(d.knob) == std::string::npos ||
      message.find("rank 2") == std::string::npos)
    return kChildWrongResult;
  return seconds < kFastSeconds ? kChildOk : kChildTooSlow;
}

TEST(JobSettings, OneRankWithADifferentSettingFailsCreationOnEveryRank) {
  for (const Difference& d : kDifferences) {
    auto outcomes = forkRanks(kRanks, [&d](int rank, const spcclUniqueId& id) {
      return createAndExpectTheDifference(d, rank, id);
    });
    for (int rank = 0; rank < kRanks; ++rank) {
      EXPECT_TRUE(outcomes[rank].exited) << d.knob << " rank " << rank;
      EXPECT_EQ(outcomes[rank].status, kChildOk) << d.knob << " rank " << rank;
    }
  }
}

// The same values written differently (hex, the default spelled out) agree.
TEST(JobSettings, EqualValuesWrittenDifferentlyAgree) {
  auto outcomes = forkRanks(kRanks, [](int rank, const spcclUniqueId& id) {
    setenv("SPCCL_TRANSPORT", "tcp", 1);
    if (rank == kOdd) setenv("SPCCL_CHUNK_BYTES", "0x100000", 1);
    if (rank == 0) setenv("SPCCL_CHECK_ROOTS", "7", 1);  // any non-zero means on
    spcclComm_t comm = initOrExit(kRanks, id, rank, kTimeoutMs);
    float x = 1.0f;
    if (spcclAllReduce(&x, &x, 1, spcclFloat32, spcclSum, comm, nullptr) != spcclSuccess)
      return kChildWrongResult;
    if (x != static_cast<float>(kRanks)) return kChildWrongResult;
    return spcclCommDestroy(comm) == spcclSuccess ? kChildOk : kChildWrongResult;
  });
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(outcomes[rank].status, kChildOk) << rank;
}

}  // namespace

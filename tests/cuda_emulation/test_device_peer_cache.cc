// The cache of peers' allocations opened through CUDA IPC
// (device/peer_allocations.h) under a bound smaller than one call's peer
// buffers (SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS), against the emulated
// driver, whose cuIpcCloseMemHandle unmaps: a base closed while a call
// still uses it fails the call's kernel or copy (or its result). Real
// ranks (forked processes), fresh buffers every call, results bit for bit
// against the CPU collective of the same inputs on host buffers, and the
// mappings still open counted by the emulation. Not run on a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../common/scoped_env.h"
#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

constexpr size_t kCount = 96;  // elements per rank's block
constexpr spcclDataType_t kType = spcclInt32;

enum class Coll { AllReduce, AllToAll };

size_t elementsOf(Coll coll, int n) {
  return coll == Coll::AllReduce ? kCount : kCount * static_cast<size_t>(n);
}

spcclResult_t run(Coll coll, const void* send, void* recv, spcclComm_t comm, void* stream) {
  return coll == Coll::AllReduce ? spcclAllReduce(send, recv, kCount, kType, spcclSum, comm, stream)
                                 : spcclAllToAll(send, recv, kCount, kType, comm, stream);
}

// Rank `rank`'s input in round `round`: differs from round to round.
std::vector<unsigned char> inputIn(int round, int rank, Coll coll, int n) {
  return inputOf(rank + round, kType, elementsOf(coll, n));
}

// The call on host buffers (the CPU collective).
std::vector<unsigned char> reference(Coll coll, int round, int rank, spcclComm_t comm, int n) {
  const std::vector<unsigned char> in = inputIn(round, rank, coll, n);
  std::vector<unsigned char> out(in.size());
  EXPECT_EQ(run(coll, in.data(), out.data(), comm, nullptr), spcclSuccess);
  return out;
}

// A call's fresh device buffers, its input in.
struct FreshBuffers {
  FreshBuffers(Coll coll, int round, int rank, int n)
      : bytes(elementsOf(coll, n) * spcclTypeSize(kType)), send(bytes), recv(bytes) {
    send.set(inputIn(round, rank, coll, n));
  }
  size_t bytes;
  DeviceBytes send, recv;
};

int64_t mappedPeerBuffers() { return emuCudaCounters().openedPeerMappings; }

// Three ranks each read 4 peer buffers per all-reduce (2 peers' send and
// receive buffers) and 2 per all-to-all, with a bound of 1: every call
// opens more than the bound, and evicts the previous call's.
TEST(DevicePeerCache, ABoundBelowOneCallsPeerBuffersKeepsResultsBitEqualN3) {
  const ScopedEnv bound("SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS", "1");
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (int round = 0; round < 4; ++round)
      for (Coll coll : {Coll::AllReduce, Coll::AllToAll}) {
        const std::string what =
            std::string(coll == Coll::AllReduce ? "all-reduce" : "all-to-all") + " round " +
            std::to_string(round);
        const std::vector<unsigned char> expected = reference(coll, round, rank, comm, 3);
        FreshBuffers buffers(coll, round, rank, 3);
        const EmuCudaCounters before = emuCudaCounters();
        EXPECT_EQ(run(coll, buffers.send.data(), buffers.recv.data(), comm, nullptr), spcclSuccess)
            << what << ": " << spcclGetLastError(comm);
        EXPECT_EQ(buffers.recv.get(nullptr), expected) << what;
        EXPECT_GT(emuCudaCounters().copiesOnDevice, before.copiesOnDevice)
            << what << ": not on the device path";
        EXPECT_LE(mappedPeerBuffers(), 1) << what << ": the bound, once the call ended";
      }
    return kChildOk;
  });
}

// Calls on a stream, each with fresh buffers, all queued before the
// stream is synchronised: more peer buffers than the bound, every result
// right, and no more than the bound mapped once the work has finished.
TEST(DevicePeerCache, QueuedCallsWithFreshBuffersOnAStreamAreAllRightN3) {
  const ScopedEnv bound("SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS", "2");
  runOnRanksWithStream(3, [](int rank, spcclComm_t comm, void* stream) {
    constexpr int kRounds = 12;
    std::vector<std::vector<unsigned char>> expected;
    for (int round = 0; round < kRounds; ++round)
      expected.push_back(reference(Coll::AllReduce, round, rank, comm, 3));
    std::vector<std::unique_ptr<FreshBuffers>> buffers;
    for (int round = 0; round < kRounds; ++round) {
      buffers.push_back(std::make_unique<FreshBuffers>(Coll::AllReduce, round, rank, 3));
      EXPECT_EQ(run(Coll::AllReduce, buffers.back()->send.data(), buffers.back()->recv.data(), comm,
                    stream),
                spcclSuccess)
          << "round " << round << ": " << spcclGetLastError(comm);
    }
    for (int round = 0; round < kRounds; ++round)
      EXPECT_EQ(buffers[round]->recv.get(stream), expected[round]) << "round " << round;
    EXPECT_LE(mappedPeerBuffers(), 2) << "the bound, once the work finished";
  });
}

}  // namespace

// spcclScatter and spcclGather of device buffers on a communicator that
// joins the device path (migrate/device_scatter_gather.h) against the
// emulated driver: real ranks, IPC copies between emulated device buffers.
// Every result is compared bit for bit with the staged path (a tcp
// communicator's call on host buffers, staged_comm.h); the path taken is
// read from the emulation's counters. Not a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"
#include "staged_comm.h"

using namespace spccl::testing;

namespace {

// One call: block `count` elements, the root the last rank.
struct Exchange {
  bool scatter;
  spcclDataType_t type;
  size_t count;
  int rank, nranks;
  int root() const { return nranks - 1; }
  size_t block() const { return count * spcclTypeSize(type); }
  size_t atRoot() const { return rank == root() ? block() * static_cast<size_t>(nranks) : 0; }
  size_t sendBytes() const { return scatter ? atRoot() : block(); }
  size_t recvBytes() const { return scatter ? block() : atRoot(); }
  std::string describe(void* stream) const {
    return std::string(scatter ? "scatter" : "gather") + " type " + std::to_string(type) + " on " +
           std::to_string(nranks) + " ranks, " + (stream != nullptr ? "a stream" : "NULL stream") +
           ", rank " + std::to_string(rank);
  }
};

spcclResult_t callOn(const Exchange& e, const void* send, void* recv, spcclComm_t comm,
                     void* stream) {
  return e.scatter ? spcclScatter(send, recv, e.count, e.type, e.root(), comm, stream)
                   : spcclGather(send, recv, e.count, e.type, e.root(), comm, stream);
}

std::vector<unsigned char> sendInput(const Exchange& e) {
  return inputOf(e.rank, e.type, e.sendBytes() / spcclTypeSize(e.type));
}

// The staged path's result (empty where the rank receives nothing).
std::vector<unsigned char> stagedResult(const Exchange& e, spcclComm_t staged) {
  std::vector<unsigned char> send = sendInput(e), recv(e.recvBytes());
  EXPECT_EQ(callOn(e, send.empty() ? nullptr : send.data(), recv.empty() ? nullptr : recv.data(),
                   staged, nullptr),
            spcclSuccess)
      << spcclGetLastError(staged);
  return recv;
}

// One call of e: device buffers, or host ones where `host`; the result
// against the staged path's; on the path, nothing through the host and
// the copies of the schedule (scatter: one per rank; gather: n at the
// root), else none on the device.
void checkOne(const Exchange& e, spcclComm_t comm, spcclComm_t staged, void* stream,
              bool devicePath, bool host = false) {
  const std::string what = e.describe(stream) + (host ? ", host buffers" : "");
  const std::vector<unsigned char> expected = stagedResult(e, staged);
  std::vector<unsigned char> hostSend = sendInput(e), hostRecv(e.recvBytes());
  DeviceBytes send(e.sendBytes()), recv(e.recvBytes());
  if (!hostSend.empty()) send.set(hostSend);
  auto orNull = [](size_t bytes, void* p) { return bytes > 0 ? p : nullptr; };
  const EmuCudaCounters before = now();
  const spcclResult_t result = host ? callOn(e, orNull(e.sendBytes(), hostSend.data()),
                                             orNull(e.recvBytes(), hostRecv.data()), comm, stream)
                                    : callOn(e, orNull(e.sendBytes(), send.data()),
                                             orNull(e.recvBytes(), recv.data()), comm, stream);
  ASSERT_EQ(result, spcclSuccess) << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  const Seen seen = since(before);
  const uint64_t copies = e.scatter ? 1u : (e.rank == e.root() ? e.nranks : 0u);
  EXPECT_EQ(seen.copiesOnDevice, devicePath ? copies : 0u) << what;
  EXPECT_TRUE(!devicePath || seen.hostCopies == 0) << what << ": copies through the host";
  const std::vector<unsigned char> got = host ? hostRecv : recv.get(stream);
  EXPECT_EQ(got, expected) << what;
}

// In place at the root, as MPI_IN_PLACE: for scatter the root's recvbuff
// is its own block of its sendbuff, for gather its sendbuff is its own
// block of its recvbuff (the staged schedules then skip the local copy);
// the other ranks out of place. The root's one buffer before the call:
// scatter's input; for gather its own input at its block, 0xA5 elsewhere.
std::vector<unsigned char> rootBufferBefore(const Exchange& e) {
  if (e.scatter) return sendInput(e);
  std::vector<unsigned char> all(e.atRoot(), 0xA5);
  const std::vector<unsigned char> own = inputOf(e.rank, e.type, e.count);
  std::copy(own.begin(), own.end(), all.begin() + static_cast<ptrdiff_t>(e.root() * e.block()));
  return all;
}

spcclResult_t callInPlace(const Exchange& e, unsigned char* all, spcclComm_t comm, void* stream) {
  unsigned char* own = all + e.root() * e.block();
  return e.scatter ? callOn(e, all, own, comm, stream) : callOn(e, own, all, comm, stream);
}

// The root's whole buffer after the in-place call on the device path,
// bit for bit against the staged path's in-place call; its own block is
// not copied (scatter: no copy at the root; gather: n - 1).
void checkInPlaceAtRoot(const Exchange& e, spcclComm_t comm, spcclComm_t staged, void* stream) {
  const std::string what = e.describe(stream) + ", in place at the root";
  std::vector<unsigned char> expected = rootBufferBefore(e);
  ASSERT_EQ(callInPlace(e, expected.data(), staged, nullptr), spcclSuccess)
      << what << ": " << spcclGetLastError(staged);
  DeviceBytes all(e.atRoot());
  all.set(rootBufferBefore(e));
  const EmuCudaCounters before = now();
  ASSERT_EQ(callInPlace(e, all.at(0), comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  const Seen seen = since(before);
  EXPECT_EQ(seen.copiesOnDevice, e.scatter ? 0u : static_cast<uint64_t>(e.nranks - 1)) << what;
  EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host";
  EXPECT_EQ(all.get(stream), expected) << what;
}

// The root's recvbuff overlapping its sendbuff at block 0, not its own
// block (scatter: recvbuff = sendbuff; gather: sendbuff = recvbuff): the
// device path would write a block a peer reads, or overwrite the root's
// input before copying it, so every rank falls back (no copy on the
// device) with the staged path's in-place bits.
void checkOverlapOffTheOwnBlock(const Exchange& e, spcclComm_t comm, spcclComm_t staged,
                                void* stream) {
  const std::string what = e.describe(stream) + ", overlapping at block 0";
  std::vector<unsigned char> expected = rootBufferBefore(e);
  unsigned char* host = expected.data();
  ASSERT_EQ(callOn(e, host, host, staged, nullptr), spcclSuccess)
      << what << ": " << spcclGetLastError(staged);
  DeviceBytes all(e.atRoot());
  all.set(rootBufferBefore(e));
  const EmuCudaCounters before = now();
  ASSERT_EQ(callOn(e, all.at(0), all.at(0), comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  EXPECT_EQ(since(before).copiesOnDevice, 0u) << what << ": took the device path";
  EXPECT_EQ(all.get(stream), expected) << what;
}

TEST(DeviceScatterGather, RootOverlapOffItsOwnBlockFallsBackN2) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, 2);
    void* stream = emuCudaStreamCreate();
    for (bool scatter : {true, false}) {
      const Exchange e{scatter, spcclFloat32, 101, rank, 2};
      if (rank == e.root())
        checkOverlapOffTheOwnBlock(e, comm, staged, stream);
      else
        checkOne(e, comm, staged, stream, false);
    }
    emuCudaStreamDestroy(stream);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

// Every call on n ranks; inPlaceAtRoot: the root's in place, the other
// ranks' out of place.
void everyCall(int n, bool inPlaceAtRoot) {
  runOnRanks(n, [n, inPlaceAtRoot](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, n);
    void* stream = emuCudaStreamCreate();
    for (bool scatter : {true, false})
      for (spcclDataType_t type : {spcclFloat32, spcclInt32})
        for (void* on : {static_cast<void*>(nullptr), stream}) {
          const Exchange e{scatter, type, 101, rank, n};
          if (inPlaceAtRoot && rank == e.root())
            checkInPlaceAtRoot(e, comm, staged, on);
          else
            checkOne(e, comm, staged, on, true);
        }
    emuCudaStreamDestroy(stream);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

TEST(DeviceScatterGather, EveryCallStreamAndNullStreamN2) { everyCall(2, false); }
TEST(DeviceScatterGather, EveryCallStreamAndNullStreamN3) { everyCall(3, false); }
TEST(DeviceScatterGather, InPlaceAtTheRootN2) { everyCall(2, true); }
TEST(DeviceScatterGather, InPlaceAtTheRootN3) { everyCall(3, true); }

// Rank 0 passes host buffers: every rank falls back to the linear
// schedule on the CPU, with the staged path's result.
TEST(DeviceScatterGather, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, 3);
    for (bool scatter : {true, false})
      checkOne(Exchange{scatter, spcclFloat32, 64, rank, 3}, comm, staged, nullptr, false,
               rank == 0);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

}  // namespace

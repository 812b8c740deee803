// spcclScatter and spcclGather of device buffers on a communicator that
// joins the device path (migrate/device_scatter_gather.h) against the
// emulated driver: real ranks, IPC copies between emulated device buffers.
// Every result is compared bit for bit with the staged path (a tcp
// communicator's call on host buffers, staged_comm.h); the path taken is
// read from the emulation's counters. Not a GPU.
#include <gtest/gtest.h>

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

void everyCall(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    spcclComm_t staged = stagedComm(comm, rank, n);
    void* stream = emuCudaStreamCreate();
    for (bool scatter : {true, false})
      for (spcclDataType_t type : {spcclFloat32, spcclInt32})
        for (void* on : {static_cast<void*>(nullptr), stream})
          checkOne(Exchange{scatter, type, 101, rank, n}, comm, staged, on, true);
    emuCudaStreamDestroy(stream);
    spcclCommDestroy(staged);
    return kChildOk;
  });
}

TEST(DeviceScatterGather, EveryCallStreamAndNullStreamN2) { everyCall(2); }
TEST(DeviceScatterGather, EveryCallStreamAndNullStreamN3) { everyCall(3); }

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

// The device-resident all-to-allv (coll/device_all_to_all.h) against the
// emulated driver, as test_device_all_to_all.cc runs the all-to-all:
// uneven blocks (zeros included) with gaps between them in both buffers,
// bit-equal to the CPU all-to-allv of the same inputs (gaps included: they
// keep what they held), the path read from the emulation's counters; and
// counts that do not match between two ranks fail every rank at once. In
// place (one buffer for both) the gaps keep what the buffer held, and the
// path makes one copy more: the send data into the communicator's scratch.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_collective_shapes.h"
#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"
#include "staging_report.h"

using namespace spccl::testing;

namespace {

// Rank r sends (r + 2 p) % 4 elements to rank p (0 for some pairs), the
// blocks in rank order with one element of gap before each.
size_t sendCount(int from, int to) { return static_cast<size_t>(from + 2 * to) % 4; }

struct Layout {
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;
  size_t sendExtent = 0, recvExtent = 0;
};

Layout layoutOf(int rank, int n) {
  Layout l;
  for (int p = 0; p < n; ++p) {
    l.sdispls.push_back(l.sendExtent + 1);
    l.sendcounts.push_back(sendCount(rank, p));
    l.sendExtent = l.sdispls.back() + l.sendcounts.back();
    l.rdispls.push_back(l.recvExtent + 1);
    l.recvcounts.push_back(sendCount(p, rank));
    l.recvExtent = l.rdispls.back() + l.recvcounts.back();
  }
  return l;
}

spcclResult_t callOn(const Layout& l, const void* send, void* recv, spcclDataType_t type,
                     spcclComm_t comm, void* stream) {
  return spcclAllToAllv(send, l.sendcounts.data(), l.sdispls.data(), recv, l.recvcounts.data(),
                        l.rdispls.data(), type, comm, stream);
}

// This rank's buffers before the call. Out of place: its input, and
// recvbuff's earlier values (which the gaps must keep). In place: one
// buffer as long as the longer extent, holding the input.
struct Before {
  std::vector<unsigned char> send, recv;
};

Before before(int rank, spcclDataType_t type, const Layout& l, bool inPlace) {
  if (!inPlace) return {inputOf(rank, type, l.sendExtent), inputOf(rank + 10, type, l.recvExtent)};
  const std::vector<unsigned char> both = inputOf(rank, type, std::max(l.sendExtent, l.recvExtent));
  return {both, both};
}

// The CPU all-to-allv of every rank's input, on host buffers apart (in
// place as well: the result is the same).
std::vector<unsigned char> reference(const Before& b, spcclDataType_t type, const Layout& l,
                                     spcclComm_t comm) {
  std::vector<unsigned char> out = b.recv;
  EXPECT_EQ(callOn(l, b.send.data(), out.data(), type, comm, nullptr), spcclSuccess)
      << spcclGetLastError(comm);
  return out;
}

uint64_t nonEmptyBlocks(const Layout& l) {
  uint64_t blocks = 0;
  for (size_t count : l.recvcounts) blocks += count > 0 ? 1 : 0;
  return blocks;
}

enum class Path { Device, ReadByCaller };

// One call on device buffers, checked bit for bit (gaps included) and for
// the path: a copy per non-empty block, in place one more.
void checkOne(int rank, int n, spcclDataType_t type, spcclComm_t comm, bool inPlace, void* stream,
              Path path = Path::Device) {
  const std::string what = "all-to-allv type " + std::to_string(type) + " on " + std::to_string(n) +
                           " ranks" + (inPlace ? ", in place" : ", out of place") +
                           (stream != nullptr ? ", on a stream" : ", NULL stream") + ", rank " +
                           std::to_string(rank);
  const Layout l = layoutOf(rank, n);
  const Before b = before(rank, type, l, inPlace);
  const std::vector<unsigned char> expected = reference(b, type, l, comm);
  DeviceBytes send(b.send.size()), recv(b.recv.size());
  send.set(b.send);
  recv.set(b.recv);
  void* out = inPlace ? send.data() : recv.data();
  const EmuCudaCounters counted = now();
  EXPECT_EQ(callOn(l, send.data(), out, type, comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(stream);
  if (path == Path::Device)
    expectCopiesOnDevice(since(counted), nonEmptyBlocks(l) + (inPlace ? 1 : 0), what);
  EXPECT_EQ(inPlace ? send.get(stream) : recv.get(stream), expected) << what;
}

void unevenBlocks(int n) {
  runOnRanksWithStream(n, [n](int rank, spcclComm_t comm, void* stream) {
    for (spcclDataType_t type : {spcclInt8, spcclBfloat16, spcclFloat32, spcclFloat64})
      for (bool inPlace : {false, true})
        for (void* on : {static_cast<void*>(nullptr), stream})
          checkOne(rank, n, type, comm, inPlace, on);
  });
}

TEST(DeviceAllToAllv, UnevenBlocksWithZerosAndGapsInAndOutOfPlaceN2) { unevenBlocks(2); }
TEST(DeviceAllToAllv, UnevenBlocksWithZerosAndGapsInAndOutOfPlaceN3) { unevenBlocks(3); }

// Rank 2 sends and receives nothing (all its counts and displacements 0,
// as a rank that routed no tokens in a mixture of experts), with device
// buffers or none (a zero-size tensor's pointer may be null): the others
// still copy on the device, rank 2 copies nothing, and nobody goes
// through the host. Bit-equal to the CPU call.
void idleRankKeepsThePath(bool idleBuffers) {
  runOnRanks(3, [idleBuffers](int rank, spcclComm_t comm) {
    constexpr int kIdle = 2;
    Layout l = layoutOf(rank, 3);
    for (int p = 0; p < 3; ++p) {
      if (rank == kIdle) l.sdispls[p] = l.rdispls[p] = 0;
      if (rank == kIdle || p == kIdle) l.sendcounts[p] = l.recvcounts[p] = 0;
    }
    if (rank == kIdle) l.sendExtent = l.recvExtent = 0;
    const spcclDataType_t type = spcclFloat32;
    const Before b = before(rank, type, l, false);
    const std::vector<unsigned char> expected = reference(b, type, l, comm);
    DeviceBytes send(std::max<size_t>(b.send.size(), 4)), recv(std::max<size_t>(b.recv.size(), 4));
    if (!b.send.empty()) send.set(b.send);
    if (!b.recv.empty()) recv.set(b.recv);
    const bool none = rank == kIdle && !idleBuffers;
    const EmuCudaCounters counted = now();
    EXPECT_EQ(
        callOn(l, none ? nullptr : send.data(), none ? nullptr : recv.data(), type, comm, nullptr),
        spcclSuccess)
        << spcclGetLastError(comm);
    const std::string what = "rank " + std::to_string(rank);
    expectCopiesOnDevice(since(counted), nonEmptyBlocks(l), what);
    if (rank != kIdle) {
      EXPECT_EQ(recv.get(nullptr), expected) << what;
    }
    return kChildOk;
  });
}

TEST(DeviceAllToAllv, ARankWithNothingToSendOrReceiveKeepsThePathN3) { idleRankKeepsThePath(true); }
TEST(DeviceAllToAllv, ARankWithNoBuffersAndNoBlocksKeepsThePathN3) { idleRankKeepsThePath(false); }

// Rank 0 passes host buffers: every rank falls back, the result (gaps
// included) still right.
TEST(DeviceAllToAllv, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const Layout l = layoutOf(rank, 3);
    const spcclDataType_t type = spcclFloat32;
    const std::string what = "rank " + std::to_string(rank);
    const Before b = before(rank, type, l, false);
    const std::vector<unsigned char> expected = reference(b, type, l, comm);
    std::vector<unsigned char> input = b.send, got = b.recv;
    DeviceBytes send(input.size()), recv(got.size());
    send.set(input);
    recv.set(got);
    const EmuCudaCounters counted = now();
    const void* from = rank == 0 ? static_cast<const void*>(input.data()) : send.data();
    void* to = rank == 0 ? static_cast<void*>(got.data()) : recv.data();
    EXPECT_EQ(callOn(l, from, to, type, comm, nullptr), spcclSuccess)
        << what << ": " << spcclGetLastError(comm);
    EXPECT_EQ(since(counted).copiesOnDevice, 0u) << what << ": the call did not fall back";
    if (rank != 0) got = recv.get(nullptr);
    EXPECT_EQ(got, expected) << what;
    return kChildOk;
  });
}
// Rank 1 expects one element more from rank 0 than rank 0 sends it: rank
// 1 fails naming both ranks' counts, the others name rank 1, well before
// the deadline.
TEST(DeviceAllToAllv, CountMismatchFailsEveryRankNamingBothRanksN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    Layout l = layoutOf(rank, 3);
    if (rank == 1) l.recvcounts[0] += 1;
    const size_t size = sizeof(float);
    DeviceBytes send(l.sendExtent * size), recv((l.recvExtent + 1) * size);
    send.set(inputOf(rank, spcclFloat32, l.sendExtent));
    const auto start = std::chrono::steady_clock::now();
    const spcclResult_t result = callOn(l, send.data(), recv.data(), spcclFloat32, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = spcclGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(result, spcclInvalidUsage) << error;
      EXPECT_NE(error.find("recvcounts[0] = 3 but rank 0's sendcounts[1] = 2"), std::string::npos)
          << error;
    } else {
      EXPECT_EQ(result, spcclRemoteError) << "rank " << rank << ": " << error;
      EXPECT_NE(error.find("rank 1 failed the exchange"), std::string::npos)
          << "rank " << rank << ": " << error;
    }
    EXPECT_LT(seconds, 10.0) << "rank " << rank << ": " << error;
    return kChildOk;
  });
}

// Two ranks as threads of one process (each uses the other's pointers as
// they are, the scratch's too), in and out of place, the NULL stream and
// a stream: bit-equal, and each rank's SPCCL_STAGING_REPORT=1 line counts
// the four calls as device-resident.
TEST(DeviceAllToAllv, StagingReportCountsTheCallsOfThreadRanks) {
  runOnThreadRanks({{"all-to-allv", 4}}, [](int rank, spcclComm_t comm, void* stream) {
    for (bool inPlace : {false, true})
      for (void* on : {static_cast<void*>(nullptr), stream})
        checkOne(rank, 2, spcclInt32, comm, inPlace, on, Path::ReadByCaller);
  });
}

}  // namespace

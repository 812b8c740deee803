// The device-resident all-to-allv (coll/device_all_to_all.h) against the
// emulated driver, as test_device_all_to_all.cc runs the all-to-all:
// uneven blocks (zeros included) with gaps between them in both buffers,
// bit-equal to the CPU all-to-allv of the same inputs (gaps included: they
// keep what they held), the path read from the emulation's counters; and
// counts that do not match between two ranks fail every rank at once.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
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

// recvbuff before the call: values the gaps must keep.
std::vector<unsigned char> recvBefore(int rank, spcclDataType_t type, const Layout& l) {
  return inputOf(rank + 10, type, l.recvExtent);
}

std::vector<unsigned char> reference(int rank, spcclDataType_t type, const Layout& l,
                                     spcclComm_t comm) {
  const std::vector<unsigned char> in = inputOf(rank, type, l.sendExtent);
  std::vector<unsigned char> out = recvBefore(rank, type, l);
  EXPECT_EQ(callOn(l, in.data(), out.data(), type, comm, nullptr), spcclSuccess)
      << spcclGetLastError(comm);
  return out;
}

uint64_t nonEmptyBlocks(const Layout& l) {
  uint64_t blocks = 0;
  for (size_t count : l.recvcounts) blocks += count > 0 ? 1 : 0;
  return blocks;
}

void unevenBlocks(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    const Layout l = layoutOf(rank, n);
    void* stream = emuCudaStreamCreate();
    for (spcclDataType_t type : {spcclInt8, spcclBfloat16, spcclFloat32, spcclFloat64})
      for (void* on : {static_cast<void*>(nullptr), stream}) {
        const std::string what =
            "all-to-allv type " + std::to_string(type) + " on " + std::to_string(n) + " ranks" +
            (on != nullptr ? ", on a stream" : ", NULL stream") + ", rank " + std::to_string(rank);
        const std::vector<unsigned char> expected = reference(rank, type, l, comm);
        const size_t size = spcclTypeSize(type);
        DeviceBytes send(l.sendExtent * size), recv(l.recvExtent * size);
        send.set(inputOf(rank, type, l.sendExtent));
        recv.set(recvBefore(rank, type, l));
        const EmuCudaCounters before = now();
        EXPECT_EQ(callOn(l, send.data(), recv.data(), type, comm, on), spcclSuccess)
            << what << ": " << spcclGetLastError(comm);
        cuStreamSynchronize(on);
        const Seen seen = since(before);
        EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host";
        EXPECT_EQ(seen.launches, 0u) << what;
        EXPECT_EQ(seen.copiesOnDevice, nonEmptyBlocks(l)) << what;
        EXPECT_EQ(recv.get(on), expected) << what;
      }
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(DeviceAllToAllv, UnevenBlocksWithZerosAndGapsN2) { unevenBlocks(2); }
TEST(DeviceAllToAllv, UnevenBlocksWithZerosAndGapsN3) { unevenBlocks(3); }

// Rank 0 passes host buffers: every rank falls back, the result (gaps
// included) still right.
TEST(DeviceAllToAllv, HostBuffersOnOneRankFallBackOnEveryRankN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    const Layout l = layoutOf(rank, 3);
    const spcclDataType_t type = spcclFloat32;
    const std::string what = "rank " + std::to_string(rank);
    const std::vector<unsigned char> expected = reference(rank, type, l, comm);
    std::vector<unsigned char> input = inputOf(rank, type, l.sendExtent);
    std::vector<unsigned char> got = recvBefore(rank, type, l);
    DeviceBytes send(input.size()), recv(got.size());
    send.set(input);
    recv.set(got);
    const EmuCudaCounters before = now();
    const void* from = rank == 0 ? static_cast<const void*>(input.data()) : send.data();
    void* to = rank == 0 ? static_cast<void*>(got.data()) : recv.data();
    EXPECT_EQ(callOn(l, from, to, type, comm, nullptr), spcclSuccess)
        << what << ": " << spcclGetLastError(comm);
    EXPECT_EQ(since(before).copiesOnDevice, 0u) << what << ": the call did not fall back";
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
// they are), the NULL stream and a stream: bit-equal, and each rank's
// SPCCL_STAGING_REPORT=1 line counts both calls as device-resident.
TEST(DeviceAllToAllv, StagingReportCountsTheCallsOfThreadRanks) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(1, [](int, const spcclUniqueId&) {
    spcclUniqueId id;
    if (spcclGetUniqueId(&id) != spcclSuccess) return kChildInitFailed;
    StderrCapture capture;
    auto rankThread = [&id](int rank) {
      if (emuCudaSetCurrentDevice(0) != 0) return;
      spcclComm_t comm = initRank(2, id, rank);
      void* stream = emuCudaStreamCreate();
      const Layout l = layoutOf(rank, 2);
      const std::vector<unsigned char> expected = reference(rank, spcclInt32, l, comm);
      for (void* on : {static_cast<void*>(nullptr), stream}) {
        DeviceBytes send(l.sendExtent * 4), recv(l.recvExtent * 4);
        send.set(inputOf(rank, spcclInt32, l.sendExtent));
        recv.set(recvBefore(rank, spcclInt32, l));
        EXPECT_EQ(callOn(l, send.data(), recv.data(), spcclInt32, comm, on), spcclSuccess)
            << spcclGetLastError(comm);
        EXPECT_EQ(recv.get(on), expected) << "rank " << rank;
      }
      emuCudaStreamDestroy(stream);
      spcclCommDestroy(comm);
    };
    std::thread other(rankThread, 1);
    rankThread(0);
    other.join();
    const std::string report = capture.finish();
    const std::map<std::string, uint64_t> expected = {{"all-to-allv", 2}};
    for (int rank : {0, 1})
      EXPECT_EQ(deviceResidentCounts(report, rank), expected)
          << "rank " << rank << "'s staging report:\n"
          << report;
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  unsetenv("SPCCL_STAGING_REPORT");
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

}  // namespace

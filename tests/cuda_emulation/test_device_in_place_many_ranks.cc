// In-place reductions on the device path with more ranks than one launch
// of the reduction kernel takes (at most 16 inputs per launch;
// coll/device_in_place_input.h): the all-reduce, the reduce-scatter and
// the reduce on 17 and 20 ranks, against the emulated driver (forked
// ranks over real sockets, cuLaunchKernel running a HOST stand-in of the
// kernel, so the schedule is proven, NOT a GPU).
//
// Each in-place call is compared bit for bit with the CPU collective of
// the same inputs (small integers: exact in any order) and with the same
// device call out of place (floats whose sum rounds differently in
// another order). The path is read from the emulation's counters: the
// kernels ran, nothing went through the host, and a rank whose own input
// a later launch reads (rank >= 16) made exactly one device copy more
// than out of place (its input to the scratch), every other rank none.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// Inputs per launch of the reduction kernel (kernels/device_reduce).
constexpr int kInputsPerLaunch = 16;

enum class Kind { AllReduce, ReduceScatter, Reduce };

// One reducing call on this rank: `count` is the API's (per rank for the
// reduce-scatter).
struct Reduction {
  Kind kind;
  spcclDataType_t type;
  size_t count;
  int root;  // the reduce's
  int rank, nranks;

  size_t size() const { return spcclTypeSize(type); }
  size_t n() const { return static_cast<size_t>(nranks); }
  size_t sendBytes() const { return count * size() * (kind == Kind::ReduceScatter ? n() : 1); }
  size_t recvBytes() const { return kind == Kind::Reduce && rank != root ? 0 : count * size(); }
  // Where recvbuff sits in sendbuff in place (NCCL's forms).
  size_t inPlaceOffset() const {
    return kind == Kind::ReduceScatter ? static_cast<size_t>(rank) * count * size() : 0;
  }
  // Whether this rank reduces at all (a reduce's non-root only waits).
  bool reducesHere() const { return kind != Kind::Reduce || rank == root; }
  // The kernel launches of this rank's reduction: 16 inputs, then the
  // partial result and up to 15 more per launch.
  uint64_t launches() const {
    if (!reducesHere()) return 0;
    return 1 + static_cast<uint64_t>((nranks - 2) / (kInputsPerLaunch - 1));
  }
  // Device-to-device copies out of place: the all-reduce's gather of the
  // peers' blocks (every block is non-empty here: count >= n).
  uint64_t copiesOutOfPlace() const { return kind == Kind::AllReduce ? n() - 1 : 0; }
  // In place, this rank's own input is read after the first launch: it
  // reduces from a copy.
  bool copiesOwnInput() const { return reducesHere() && rank >= kInputsPerLaunch; }
  std::string describe(bool inPlace) const {
    static const char* kNames[] = {"all-reduce", "reduce-scatter", "reduce"};
    return std::string(kNames[static_cast<int>(kind)]) + " type " + std::to_string(type) +
           " count " + std::to_string(count) + " root " + std::to_string(root) + " on " +
           std::to_string(nranks) + " ranks" + (inPlace ? ", in place" : ", out of place") +
           ", rank " + std::to_string(rank);
  }
};

spcclResult_t callOn(const Reduction& r, const void* send, void* recv, spcclComm_t comm) {
  switch (r.kind) {
    case Kind::AllReduce:
      return spcclAllReduce(send, recv, r.count, r.type, spcclSum, comm, nullptr);
    case Kind::ReduceScatter:
      return spcclReduceScatter(send, recv, r.count, r.type, spcclSum, comm, nullptr);
    default:
      return spcclReduce(send, recv, r.count, r.type, spcclSum, r.root, comm, nullptr);
  }
}

// Floats whose sum over the ranks is not exact: another order of
// reduction gives other bits.
std::vector<unsigned char> roundingInput(const Reduction& r) {
  std::vector<float> values(r.sendBytes() / sizeof(float));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 1.0f + static_cast<float>((static_cast<size_t>(r.rank) * 131 + i * 17) % 1000) /
                           3.0f * 1e-3f;
  std::vector<unsigned char> bytes(r.sendBytes());
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The CPU collective of `input` on host buffers (empty where this rank
// receives nothing).
std::vector<unsigned char> onHost(const Reduction& r, std::vector<unsigned char> input,
                                  spcclComm_t comm) {
  std::vector<unsigned char> out(r.recvBytes());
  EXPECT_EQ(callOn(r, input.data(), out.empty() ? nullptr : out.data(), comm), spcclSuccess)
      << r.describe(false) << ": " << spcclGetLastError(comm);
  return out;
}

struct Outcome {
  std::vector<unsigned char> received;
  Seen seen;
};

// The call on device buffers holding `input`: in place one buffer
// (recvbuff at inPlaceOffset of sendbuff), else two.
Outcome onDevice(const Reduction& r, const std::vector<unsigned char>& input, bool inPlace,
                 spcclComm_t comm) {
  DeviceBytes send(r.sendBytes()), recv(r.recvBytes());
  send.set(input);
  unsigned char* target = inPlace ? send.at(r.inPlaceOffset()) : recv.at(0);
  void* recvbuff = r.recvBytes() > 0 ? target : nullptr;
  const EmuCudaCounters before = now();
  EXPECT_EQ(callOn(r, send.data(), recvbuff, comm), spcclSuccess)
      << r.describe(inPlace) << ": " << spcclGetLastError(comm);
  Outcome outcome{{}, since(before)};
  if (r.recvBytes() == 0) return outcome;
  const std::vector<unsigned char> whole = inPlace ? send.get(nullptr) : recv.get(nullptr);
  const auto from = whole.begin() + static_cast<long>(inPlace ? r.inPlaceOffset() : 0);
  outcome.received.assign(from, from + static_cast<long>(r.recvBytes()));
  return outcome;
}

// `seen` is the device path on this rank: the launches, nothing through
// the host, and the scratch copy exactly where this rank needs one.
void expectDevicePath(const Reduction& r, bool inPlace, const Seen& seen) {
  const std::string what = r.describe(inPlace);
  EXPECT_EQ(seen.hostCopies, 0u) << what << ": copies through the host (fallen back)";
  EXPECT_EQ(seen.launches, r.launches()) << what;
  const uint64_t scratchCopies = inPlace && r.copiesOwnInput() ? 1 : 0;
  EXPECT_EQ(seen.copiesOnDevice, r.copiesOutOfPlace() + scratchCopies) << what;
}

// In place and out of place on the device, both against `expected` where
// given, and against each other.
void checkInPlace(const Reduction& r, const std::vector<unsigned char>& input, spcclComm_t comm,
                  const std::vector<unsigned char>* expected) {
  const Outcome apart = onDevice(r, input, false, comm);
  const Outcome inPlace = onDevice(r, input, true, comm);
  expectDevicePath(r, false, apart.seen);
  expectDevicePath(r, true, inPlace.seen);
  EXPECT_EQ(inPlace.received, apart.received) << r.describe(true) << ": not the out-of-place bits";
  if (expected != nullptr) {
    EXPECT_EQ(apart.received, *expected) << r.describe(false);
    EXPECT_EQ(inPlace.received, *expected) << r.describe(true);
  }
}

// Every reduction, f32 and i32 sums, the reduce at a root that a later
// launch reads (the last rank) and at one the first launch reads (3).
void inPlaceOnManyRanks(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    const size_t allReduceCount = 2 * static_cast<size_t>(n) + 3;  // uneven blocks
    for (spcclDataType_t type : {spcclFloat32, spcclInt32}) {
      const Reduction calls[] = {{Kind::AllReduce, type, allReduceCount, 0, rank, n},
                                 {Kind::ReduceScatter, type, 5, 0, rank, n},
                                 {Kind::Reduce, type, 7, n - 1, rank, n},
                                 {Kind::Reduce, type, 7, 3, rank, n}};
      for (const Reduction& r : calls) {
        const std::vector<unsigned char> input = inputOf(rank, type, r.sendBytes() / r.size());
        const std::vector<unsigned char> expected = onHost(r, input, comm);
        checkInPlace(r, input, comm, &expected);
        if (type == spcclFloat32) checkInPlace(r, roundingInput(r), comm, nullptr);
      }
    }
    return kChildOk;
  });
}

TEST(DeviceInPlaceManyRanks, ReductionsTakeThePathBitEqualToOutOfPlaceN17) {
  inPlaceOnManyRanks(17);
}
TEST(DeviceInPlaceManyRanks, ReductionsTakeThePathBitEqualToOutOfPlaceN20) {
  inPlaceOnManyRanks(20);
}

// A call that fell back on this rank: nothing ran on a device, and the
// result is the CPU collective's.
void expectFallback(const Reduction& r, const Outcome& got, const std::vector<unsigned char>& want,
                    const std::string& why) {
  const std::string what = r.describe(true) + " (" + why + ")";
  EXPECT_EQ(got.seen.launches, 0u) << what << ": a kernel ran (the call did not fall back)";
  EXPECT_EQ(got.seen.copiesOnDevice, 0u) << what << ": a device copy ran";
  EXPECT_EQ(got.received, want) << what;
}

// Rank 16's scratch cannot be had (its cuMemAlloc fails when the call is
// made): its offer is not usable, so every rank falls back in that call,
// with the right result; the next call reserves it and takes the path.
TEST(DeviceInPlaceManyRanks, FailedScratchReservationFallsBackOnEveryRankN17) {
  runOnRanks(17, [](int rank, spcclComm_t comm) {
    const Reduction r{Kind::AllReduce, spcclFloat32, 40, 0, rank, 17};
    const std::vector<unsigned char> input = inputOf(rank, r.type, r.count);
    const std::vector<unsigned char> expected = onHost(r, input, comm);
    if (rank == 16) emuCudaFailMemAllocs(1);
    expectFallback(r, onDevice(r, input, true, comm), expected, "rank 16 had no scratch");
    const Outcome again = onDevice(r, input, true, comm);
    expectDevicePath(r, true, again.seen);
    EXPECT_EQ(again.received, expected) << r.describe(true) << ", the second call";
    return kChildOk;
  });
}

// recvbuff one element past where the in-place form puts it: this rank
// would write bytes its peers (or its own kernel) still read. Every rank
// falls back, with any number of ranks, and gets the CPU collective's
// result of the same inputs.
void overlapOffTheInPlaceForm(int n) {
  runOnRanks(n, [n](int rank, spcclComm_t comm) {
    const Reduction calls[] = {
        {Kind::AllReduce, spcclFloat32, 2 * static_cast<size_t>(n), 0, rank, n},
        {Kind::ReduceScatter, spcclFloat32, 4, 0, rank, n},
        {Kind::Reduce, spcclFloat32, 6, n - 1, rank, n}};
    for (const Reduction& r : calls) {
      const std::vector<unsigned char> input = inputOf(rank, r.type, r.sendBytes() / r.size());
      const std::vector<unsigned char> expected = onHost(r, input, comm);
      DeviceBytes buffer(r.sendBytes() + r.size());
      buffer.set(input);
      // A reduce's non-root passes no recvbuff.
      void* recv = r.recvBytes() > 0 ? buffer.at(r.inPlaceOffset() + r.size()) : nullptr;
      const EmuCudaCounters before = now();
      EXPECT_EQ(callOn(r, buffer.data(), recv, comm), spcclSuccess)
          << r.describe(true) << ": " << spcclGetLastError(comm);
      Outcome got{{}, since(before)};
      if (recv != nullptr) {
        const std::vector<unsigned char> whole = buffer.get(nullptr);
        const auto from = whole.begin() + static_cast<long>(r.inPlaceOffset() + r.size());
        got.received.assign(from, from + static_cast<long>(r.recvBytes()));
      }
      expectFallback(r, got, expected, "recvbuff one element off the in-place form");
    }
    return kChildOk;
  });
}

TEST(DeviceInPlaceManyRanks, OverlapOffTheInPlaceFormFallsBackN3) { overlapOffTheInPlaceForm(3); }
TEST(DeviceInPlaceManyRanks, OverlapOffTheInPlaceFormFallsBackN17) { overlapOffTheInPlaceForm(17); }

}  // namespace

// The device-resident all-reduce (coll/device_all_reduce.h) against the
// emulated driver: real ranks (forked processes, real sockets), emulated
// device memory that a peer maps through its IPC handle, and cuLaunchKernel
// running a HOST stand-in of spccl's kernel (emulated_driver.cc). So this
// proves the schedule (the handles, offsets, blocks, barriers, stream
// order, fallback and errors), NOT the CUDA kernel or a GPU's IPC: those
// run in tests/gpu on a lent GPU.
//
// Every result is compared bit for bit with the CPU all-reduce of the same
// inputs on host buffers, in the same job. The inputs are small integers
// (1..7), so every type and op is exact whatever the order of reduction.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "device_values.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

constexpr spcclRedOp_t kOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};

size_t typeBytes(spcclDataType_t type) { return spcclTypeSize(type); }

// The CPU all-reduce of every rank's input, on host buffers.
std::vector<unsigned char> reference(spcclComm_t comm, int rank, spcclDataType_t type,
                                     spcclRedOp_t op, size_t count) {
  std::vector<unsigned char> in = inputOf(rank, type, count), out(in.size());
  EXPECT_EQ(spcclAllReduce(in.data(), out.data(), count, type, op, comm, nullptr), spcclSuccess);
  return out;
}

uint64_t launches() { return emuCudaCounters().kernelLaunches; }

// One call on device buffers (stream or NULL stream, in place or not),
// checked against the reference; the kernel must have run on this rank,
// or with devicePath false, no kernel (every rank fell back).
void checkOne(spcclComm_t comm, int rank, spcclDataType_t type, spcclRedOp_t op, size_t count,
              bool inPlace, void* stream, bool devicePath = true) {
  const std::string what = "type " + std::to_string(type) + " op " + std::to_string(op) +
                           (inPlace ? " in place" : " out of place") +
                           (stream != nullptr ? " on a stream" : " on the NULL stream");
  const std::vector<unsigned char> expected = reference(comm, rank, type, op, count);
  const size_t bytes = count * typeBytes(type);
  DeviceBytes send(bytes), recvStorage(bytes);
  send.set(inputOf(rank, type, count));
  const DeviceBytes& recv = inPlace ? send : recvStorage;
  const uint64_t before = launches();
  ASSERT_EQ(spcclAllReduce(send.data(), recv.data(), count, type, op, comm, stream), spcclSuccess)
      << what << ": " << spcclGetLastError(comm);
  EXPECT_EQ(recv.get(stream), expected) << what;
  // A rank reduces its block with a kernel; with fewer elements than
  // ranks, the ranks from `count` on have none.
  if (!devicePath) {
    EXPECT_EQ(launches(), before) << what << ": a kernel ran (the call did not fall back)";
  } else if (count > static_cast<size_t>(rank)) {
    EXPECT_GT(launches(), before) << what << ": no kernel ran (the call was staged)";
  } else {
    EXPECT_EQ(launches(), before) << what << ": a kernel ran for an empty block";
  }
}

void everyTypeAndOp(int n) {
  runOnRanks(n, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    for (int t = 0; t < spcclNumTypes; ++t)
      for (spcclRedOp_t op : kOps)
        for (bool inPlace : {false, true})
          for (void* s : {static_cast<void*>(nullptr), stream})
            checkOne(comm, rank, static_cast<spcclDataType_t>(t), op, 37, inPlace, s);
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(DeviceAllReduce, EveryTypeOpInAndOutOfPlaceStreamAndNullStreamN2) { everyTypeAndOp(2); }
TEST(DeviceAllReduce, EveryTypeOpInAndOutOfPlaceStreamAndNullStreamN3) { everyTypeAndOp(3); }

// Fewer elements than ranks (empty blocks), one element, and a count that
// the ranks split unevenly, large enough for several launch blocks.
TEST(DeviceAllReduce, EmptyAndUnevenBlocksN3) {
  runOnRanks(3, [](int rank, spcclComm_t comm) {
    for (size_t count : {size_t{1}, size_t{2}, size_t{4099}})
      checkOne(comm, rank, spcclFloat32, spcclSum, count, false, nullptr);
    return kChildOk;
  });
}

// Calls queued on a stream one after the other, each reading the previous
// one's result: stream order holds across device-resident calls.
TEST(DeviceAllReduce, ChainedCallsOnAStreamN2) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    DeviceBytes buffer(64 * sizeof(float));
    std::vector<unsigned char> ones(64 * sizeof(float));
    for (size_t i = 0; i < 64; ++i) encode(spcclFloat32, 1, &ones[i * sizeof(float)]);
    buffer.set(ones);
    for (int k = 0; k < 5; ++k)
      EXPECT_EQ(
          spcclAllReduce(buffer.data(), buffer.data(), 64, spcclFloat32, spcclSum, comm, stream),
          spcclSuccess);
    const std::vector<unsigned char> got = buffer.get(stream);
    float first = 0;
    std::memcpy(&first, got.data(), sizeof(first));
    EXPECT_EQ(first, 32.0f) << "rank " << rank << ": 1 doubled 5 times";
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

// Two ranks as threads of one process, rank r on emulated device
// devices[r]: each uses the other's pointers directly (the driver refuses
// to open a process's own IPC handle), so on one device the path is
// taken; on two, the kernel could not read the other device's memory
// (spccl enables no peer access between its own contexts) and both fall
// back. Both results must be right either way.
void threadsOfOneProcess(const std::vector<int>& devices, bool devicePath) {
  auto outcomes = forkRanks(1, [&](int, const spcclUniqueId&) {
    spcclUniqueId id;
    if (spcclGetUniqueId(&id) != spcclSuccess) return kChildInitFailed;
    const size_t count = 1000;
    std::vector<std::vector<unsigned char>> got(2);
    std::vector<uint64_t> launched(2);
    auto rankThread = [&](int rank) {
      if (emuCudaSetCurrentDevice(devices[rank]) != 0) return;
      spcclComm_t comm = initRank(2, id, rank);
      DeviceBytes send(count * 4), recv(count * 4);
      send.set(inputOf(rank, spcclInt32, count));
      const uint64_t before = launches();
      if (spcclAllReduce(send.data(), recv.data(), count, spcclInt32, spcclSum, comm, nullptr) ==
          spcclSuccess)
        got[rank] = recv.get(nullptr);
      launched[rank] = launches() - before;
      spcclCommDestroy(comm);
    };
    std::thread other(rankThread, 1);
    rankThread(0);
    other.join();
    std::vector<unsigned char> expected = inputOf(0, spcclInt32, count);
    const std::vector<unsigned char> second = inputOf(1, spcclInt32, count);
    for (size_t i = 0; i < count; ++i) {
      int32_t a = 0, b = 0;
      std::memcpy(&a, &expected[i * 4], 4);
      std::memcpy(&b, &second[i * 4], 4);
      a += b;
      std::memcpy(&expected[i * 4], &a, 4);
    }
    EXPECT_EQ(got[0], expected);
    EXPECT_EQ(got[1], expected);
    if (devicePath) {
      EXPECT_GT(launched[0] + launched[1], 0u) << "the device path was not taken";
    } else {
      EXPECT_EQ(launched[0] + launched[1], 0u) << "the device path was taken";
    }
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

TEST(DeviceAllReduce, RanksThatAreThreadsOfOneProcess) { threadsOfOneProcess({0, 0}, true); }

// One rank with host buffers: every rank falls back to the CPU all-reduce
// in the same call; no kernel runs anywhere.
TEST(DeviceAllReduce, HostBuffersOnOneRankFallBackOnEveryRank) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 33;
    const std::vector<unsigned char> expected = reference(comm, rank, spcclInt32, spcclSum, count);
    const uint64_t before = launches();
    std::vector<unsigned char> got;
    if (rank == 0) {
      DeviceBytes send(count * 4), recv(count * 4);
      send.set(inputOf(rank, spcclInt32, count));
      EXPECT_EQ(
          spcclAllReduce(send.data(), recv.data(), count, spcclInt32, spcclSum, comm, nullptr),
          spcclSuccess);
      got = recv.get(nullptr);
    } else {
      std::vector<unsigned char> in = inputOf(rank, spcclInt32, count);
      got.resize(in.size());
      EXPECT_EQ(spcclAllReduce(in.data(), got.data(), count, spcclInt32, spcclSum, comm, nullptr),
                spcclSuccess);
    }
    EXPECT_EQ(got, expected);
    EXPECT_EQ(launches(), before) << "rank " << rank;
    return kChildOk;
  });
}

// SPCCL_DEVICE_ALLREDUCE=0: device buffers are staged as before.
TEST(DeviceAllReduce, KnobOffStagesAsBefore) {
  setenv("SPCCL_DEVICE_ALLREDUCE", "0", 1);
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 40;
    const std::vector<unsigned char> expected =
        reference(comm, rank, spcclFloat32, spcclMax, count);
    DeviceBytes send(count * 4), recv(count * 4);
    send.set(inputOf(rank, spcclFloat32, count));
    const uint64_t before = launches();
    EXPECT_EQ(
        spcclAllReduce(send.data(), recv.data(), count, spcclFloat32, spcclMax, comm, nullptr),
        spcclSuccess);
    EXPECT_EQ(recv.get(nullptr), expected);
    EXPECT_EQ(launches(), before);
    return kChildOk;
  });
  unsetenv("SPCCL_DEVICE_ALLREDUCE");
}

// A kernel launch that fails on rank 1: rank 1 fails with the driver's
// error and rank 0 names rank 1, at once (agreed, not a timeout). After a
// failure the communicator is unusable, as after any (engine.cc).
TEST(DeviceAllReduce, FailedLaunchFailsEveryRankNamingIt) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 16;
    DeviceBytes send(count * 4), recv(count * 4);
    send.set(inputOf(rank, spcclFloat32, count));
    if (rank == 1) emuCudaFailLaunches(1);
    const spcclResult_t result =
        spcclAllReduce(send.data(), recv.data(), count, spcclFloat32, spcclSum, comm, nullptr);
    const std::string error = spcclGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(result, spcclSystemError);
      EXPECT_NE(error.find("cuLaunchKernel"), std::string::npos) << error;
    } else {
      EXPECT_EQ(result, spcclRemoteError);
      EXPECT_NE(error.find("rank 1 failed the reduction"), std::string::npos) << error;
    }
    return kChildOk;
  });
}

// The same on a stream: the call returns at once, and the failure is the
// communicator's async error on both ranks.
TEST(DeviceAllReduce, FailedLaunchOnAStreamIsTheAsyncError) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    const size_t count = 16;
    DeviceBytes send(count * 4), recv(count * 4);
    send.set(inputOf(rank, spcclFloat32, count));
    void* stream = emuCudaStreamCreate();
    if (rank == 1) emuCudaFailLaunches(1);
    EXPECT_EQ(spcclAllReduce(send.data(), recv.data(), count, spcclFloat32, spcclSum, comm, stream),
              spcclSuccess);
    cuStreamSynchronize(stream);
    spcclResult_t async = spcclSuccess;
    EXPECT_EQ(spcclCommGetAsyncError(comm, &async), spcclSuccess);
    EXPECT_EQ(async, rank == 1 ? spcclSystemError : spcclRemoteError) << "rank " << rank;
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

// ---- Several devices of one host (emulated_devices.h) ----

// spcclIallReduce of device buffers runs device-resident too, queued:
// two calls in flight (in place, and out of place), each checked; with
// peer access missing between the two devices, the same calls fall back
// on both ranks. (Not one buffer for both: the staged fallback copies a
// call's input when it is issued, the device path reads it when it runs.)
void nonBlockingCalls(bool devicePath) {
  runOnRanks(2,
             [devicePath](int rank, spcclComm_t comm) {
               const size_t count = 300;
               const std::vector<unsigned char> expected =
                   reference(comm, rank, spcclInt32, spcclSum, count);
               DeviceBytes inPlace(count * 4), send(count * 4), recv(count * 4);
               inPlace.set(inputOf(rank, spcclInt32, count));
               send.set(inputOf(rank, spcclInt32, count));
               const uint64_t before = launches();
               spcclRequest_t first = nullptr, second = nullptr;
               EXPECT_EQ(spcclIallReduce(inPlace.data(), inPlace.data(), count, spcclInt32,
                                         spcclSum, comm, &first),
                         spcclSuccess);
               EXPECT_EQ(spcclIallReduce(send.data(), recv.data(), count, spcclInt32, spcclSum,
                                         comm, &second),
                         spcclSuccess);
               EXPECT_EQ(spcclWait(second), spcclSuccess) << spcclGetLastError(comm);
               EXPECT_EQ(spcclWait(first), spcclSuccess) << spcclGetLastError(comm);
               const uint64_t launched = launches() - before;
               EXPECT_EQ(inPlace.get(nullptr), expected) << "rank " << rank << ", in place";
               EXPECT_EQ(recv.get(nullptr), expected) << "rank " << rank << ", out of place";
               if (devicePath) {
                 EXPECT_GE(launched, 2u) << "rank " << rank << ": the calls were staged";
               } else {
                 EXPECT_EQ(launched, 0u) << "rank " << rank << ": a kernel ran";
               }
               return kChildOk;
             },
             {0, 1});
}

TEST(DeviceAllReduce, NonBlockingCallsTakeThePath) {
  EmulatedHost host(2, nullptr);
  nonBlockingCalls(true);
}

TEST(DeviceAllReduce, NonBlockingCallsFallBackWithoutPeerAccess) {
  EmulatedHost host(2, "0:1");
  nonBlockingCalls(false);
}

// Three ranks on three devices that all reach each other take the path.
TEST(DeviceAllReduce, RanksOnPeerDevicesTakeThePathN3) {
  EmulatedHost host(3, nullptr);
  runOnRanks(3,
             [](int rank, spcclComm_t comm) {
               void* stream = emuCudaStreamCreate();
               for (spcclDataType_t type : {spcclFloat32, spcclBfloat16, spcclInt64})
                 for (spcclRedOp_t op : {spcclSum, spcclAvg, spcclMax})
                   for (bool inPlace : {false, true})
                     checkOne(comm, rank, type, op, 37, inPlace, stream);
               emuCudaStreamDestroy(stream);
               return kChildOk;
             },
             {0, 1, 2});
}

// What each rank's log file (SPCCL_DEBUG_FILE=dir/rank.%p) holds.
std::vector<std::string> readLogs(const std::string& dir) {
  std::vector<std::string> logs;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return logs;
  while (const dirent* entry = readdir(d)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = dir + "/" + entry->d_name;
    std::ifstream in(path);
    logs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
  }
  closedir(d);
  rmdir(dir.c_str());
  return logs;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Device 2 cannot access device 0's memory (that direction only): every
// rank stages every call, with the right result, and says why once at
// INFO, naming the pair.
TEST(DeviceAllReduce, OnePairWithoutPeerAccessFallsBackOnEveryRank) {
  EmulatedHost host(3, "2:0");
  char dir[] = "/tmp/spccl_peer_access_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("SPCCL_DEBUG", "INFO", 1);
  setenv("SPCCL_DEBUG_SUBSYS", "INIT", 1);
  setenv("SPCCL_DEBUG_FILE", (std::string(dir) + "/rank.%p").c_str(), 1);
  runOnRanks(3,
             [](int rank, spcclComm_t comm) {
               for (bool inPlace : {false, true})
                 checkOne(comm, rank, spcclFloat32, spcclSum, 1000, inPlace, nullptr, false);
               return kChildOk;
             },
             {0, 1, 2});
  unsetenv("SPCCL_DEBUG");
  unsetenv("SPCCL_DEBUG_SUBSYS");
  unsetenv("SPCCL_DEBUG_FILE");
  const std::vector<std::string> logs = readLogs(dir);
  ASSERT_EQ(logs.size(), 3u);
  for (const std::string& log : logs) {
    EXPECT_EQ(occurrences(log, "no device-resident all-reduce on this communicator"), 1u) << log;
    EXPECT_EQ(occurrences(log,
                          "rank 2 (device 0000:12:00) cannot access rank 0's device "
                          "0000:10:00 as a peer"),
              1u)
        << log;
  }
}

// Two ranks on one device need no peer access, even where no two devices
// of the host have it.
TEST(DeviceAllReduce, RanksOnOneDeviceTakeThePathWithoutPeerAccess) {
  EmulatedHost host(3, "0:1,1:0,0:2,2:0,1:2,2:1");
  runOnRanks(2,
             [](int rank, spcclComm_t comm) {
               checkOne(comm, rank, spcclFloat32, spcclSum, 100, false, nullptr);
               checkOne(comm, rank, spcclInt32, spcclMax, 100, true, nullptr);
               return kChildOk;
             },
             {1, 1});
}

// Both ranks created the communicator on device 0, but rank 1 calls with
// buffers on device 1, which device 0 cannot reach: peer access was
// checked for device 0 only, so every rank falls back.
TEST(DeviceAllReduce, BuffersOnAnotherDeviceThanAtCreationFallBack) {
  EmulatedHost host(2, "0:1,1:0");
  runOnRanks(2,
             [](int rank, spcclComm_t comm) {
               if (rank == 1) {
                 EXPECT_EQ(emuCudaSetCurrentDevice(1), 0);
               }
               checkOne(comm, rank, spcclFloat32, spcclSum, 100, false, nullptr, false);
               return kChildOk;
             },
             {0, 0});
}

// A non-blocking communicator is created on a thread of its own, where no
// CUDA context is current: it still names the device of the thread that
// created it, and takes the path on two peer devices.
TEST(DeviceAllReduce, NonBlockingCommunicatorOnPeerDevicesTakesThePath) {
  EmulatedHost host(2, nullptr);
  auto outcomes = forkRanks(2, [](int rank, const spcclUniqueId& id) {
    if (emuCudaSetCurrentDevice(rank) != 0) return kChildInitFailed;
    spcclComm_t comm = initRank(2, id, rank, /*blocking=*/false);
    checkOne(comm, rank, spcclFloat32, spcclSum, 100, false, nullptr);
    spcclCommDestroy(comm);
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

// Two MIG instances of one GPU (one PCI location, two UUIDs, no peer
// access): not one device, so every rank falls back.
TEST(DeviceAllReduce, RanksOnTwoMigInstancesFallBack) {
  EmulatedHost host(2, "0:1,1:0");
  setenv("EMU_CUDA_ONE_PCI_LOCATION", "1", 1);
  runOnRanks(2,
             [](int rank, spcclComm_t comm) {
               checkOne(comm, rank, spcclFloat32, spcclSum, 100, false, nullptr, false);
               return kChildOk;
             },
             {0, 1});
  unsetenv("EMU_CUDA_ONE_PCI_LOCATION");
}

TEST(DeviceAllReduce, RanksThatAreThreadsOfOneProcessOnTwoDevicesFallBack) {
  EmulatedHost host(2, nullptr);
  threadsOfOneProcess({0, 1}, false);
}

}  // namespace

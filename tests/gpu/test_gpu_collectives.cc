// Every collective of include/spccl.h on CUDA memory, one process per rank
// sharing one GPU (device 0): dense collectives x type x op x count, in and
// out of place, on a created stream and on the NULL stream; the sparse
// all-reduce (dense form and COO) bit for bit against the dense all-reduce
// and identical on every rank; the compressed all-reduce within the bound
// of docs/compressed.md; token top-k and mask; the migration collectives;
// the non-blocking forms; pinned, managed and plain host memory; mixed
// host/device arguments rejected naming the argument; stream order (many
// calls queued before one synchronisation, a late kernel writing the input
// right before a call, a write of the input right after one).
//
// Launch one per rank: spcclrun -n N -- spccl_gpu_collective_tests (the
// ctest entries and tests/gpu/run_collectives.sh do). Without a usable
// CUDA device every test skips, with the reason, and no communicator is
// made. SPCCL_GPU_COLL_SMALL=1 keeps every size small (compute-sanitizer).
//
// The reference values are those of the CPU tests: tests/common/
// coll_reference.h (dense), tests/common/sparse_inputs.h (sparse) and
// tests/integration/test_compressed_support.h (bound, token masks).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "../common/coll_reference.h"
#include "../common/sparse_inputs.h"
#include "../integration/test_compressed_support.h"
#include "collective_checks.h"
#include "delayed_copy.h"
#include "gpu_collectives_world.h"
#include "memory_kinds.h"
#include "spccl.h"

// The communicator's CUDA device and its stream-ordered errors (the GPU
// contract). Weak, so that this program links and reports their absence
// as a failure against a libspccl that lacks them.
extern "C" {
spcclResult_t spcclCommCuDevice(spcclComm_t comm, int* device) __attribute__((weak));
spcclResult_t spcclCommGetAsyncError(spcclComm_t comm, spcclResult_t* asyncError)
    __attribute__((weak));
}

namespace {

using spccl::gpu_test::KindBuffer;
using spccl::gpu_test::MemoryKind;
using namespace spccl::coll_reference;
using namespace spccl::gpu_coll_test;

// ---- dense collectives ----

void checkReduce(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count, bool inPlace,
                 int root) {
  const World& w = world();
  const size_t es = spcclTypeSize(type);
  const std::string what =
      describe("Reduce", type, op, count, inPlace, s) + " root " + std::to_string(root);
  std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, reductionInput(op, w.rank, i, w.nranks));
    store(type, expected.data(), i, reductionReference(type, op, i, w.nranks));
  }
  KindBuffer dsend(deviceKind(), count * es), drecv(deviceKind(), count * es);
  dsend.upload(send.data(), count * es, s);
  KindBuffer& out = inPlace ? dsend : drecv;
  expectSuccess(spcclReduce(dsend.get(), out.get(), count, type, op, root, w.comm, s), what);
  std::vector<unsigned char> got = out.download(s);
  if (w.rank == root) expectElements(expected, got, type, count, what);
}

void checkReduceScatter(cudaStream_t s, spcclDataType_t type, spcclRedOp_t op, size_t count,
                        bool inPlace) {
  const World& w = world();
  const size_t es = spcclTypeSize(type), total = count * w.nranks;
  const std::string what = describe("ReduceScatter", type, op, count, inPlace, s);
  std::vector<char> send = hostBuffer(type, total), expected = hostBuffer(type, count);
  for (size_t i = 0; i < total; ++i)
    store(type, send.data(), i, reductionInput(op, w.rank, i, w.nranks));
  for (size_t i = 0; i < count; ++i)
    store(type, expected.data(), i, reductionReference(type, op, w.rank * count + i, w.nranks));
  KindBuffer dsend(deviceKind(), total * es), drecv(deviceKind(), count * es);
  dsend.upload(send.data(), total * es, s);
  const size_t offset = inPlace ? w.rank * count * es : 0;
  void* out = inPlace ? dsend.as<char>() + offset : drecv.get();
  expectSuccess(spcclReduceScatter(dsend.get(), out, count, type, op, w.comm, s), what);
  expectElements(expected, (inPlace ? dsend : drecv).download(s), type, count, what, offset);
}

void checkBroadcast(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace, int root) {
  const World& w = world();
  const size_t es = spcclTypeSize(type);
  const std::string what =
      describe("Broadcast", type, spcclSum, count, inPlace, s) + " root " + std::to_string(root);
  std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    if (w.rank == root) store(type, send.data(), i, tagValue(root, 0, i));
    store(type, expected.data(), i, tagValue(root, 0, i));
  }
  KindBuffer dsend(deviceKind(), count * es), drecv(deviceKind(), count * es);
  dsend.upload(send.data(), count * es, s);
  KindBuffer& out = inPlace ? dsend : drecv;
  expectSuccess(spcclBroadcast(dsend.get(), out.get(), count, type, root, w.comm, s), what);
  expectElements(expected, out.download(s), type, count, what);
}

void checkAllGather(cudaStream_t s, spcclDataType_t type, size_t count, bool inPlace) {
  const World& w = world();
  const size_t es = spcclTypeSize(type), total = count * w.nranks;
  const std::string what = describe("AllGather", type, spcclSum, count, inPlace, s);
  std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, total);
  for (size_t i = 0; i < count; ++i) store(type, send.data(), i, tagValue(w.rank, 0, i));
  for (int r = 0; r < w.nranks; ++r)
    for (size_t i = 0; i < count; ++i)
      store(type, expected.data(), r * count + i, tagValue(r, 0, i));
  KindBuffer dsend(deviceKind(), count * es), drecv(deviceKind(), total * es);
  const void* in = dsend.get();
  if (inPlace) {
    drecv.upload(send.data(), count * es, s, w.rank * count * es);
    in = drecv.as<char>() + w.rank * count * es;
  } else {
    dsend.upload(send.data(), count * es, s);
  }
  expectSuccess(spcclAllGather(in, drecv.get(), count, type, w.comm, s), what);
  expectElements(expected, drecv.download(s), type, total, what);
}

void checkSendRecvRing(cudaStream_t s, spcclDataType_t type, size_t count) {
  const World& w = world();
  if (w.nranks < 2) return;
  const size_t es = spcclTypeSize(type);
  const std::string what = describe("Send/Recv ring", type, spcclSum, count, false, s);
  const int next = (w.rank + 1) % w.nranks, previous = (w.rank + w.nranks - 1) % w.nranks;
  std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, count);
  for (size_t i = 0; i < count; ++i) {
    store(type, send.data(), i, tagValue(w.rank, next, i));
    store(type, expected.data(), i, tagValue(previous, w.rank, i));
  }
  KindBuffer dsend(deviceKind(), count * es), drecv(deviceKind(), count * es);
  dsend.upload(send.data(), count * es, s);
  expectSuccess(spcclGroupStart(), what);
  expectSuccess(spcclSend(dsend.get(), count, type, next, w.comm, s), what + " send");
  expectSuccess(spcclRecv(drecv.get(), count, type, previous, w.comm, s), what + " recv");
  expectSuccess(spcclGroupEnd(), what);
  expectElements(expected, drecv.download(s), type, count, what);
}

std::vector<size_t> matrixCounts() {
  if (smallRun()) return {0, 1, 257};
  return {0, 1, 4097};
}

// Every type x op x count x in/out of place x stream form.
TEST_F(GpuCollectives, ReductionsEveryTypeOpCountAndStream) {
  int round = 0;
  for (cudaStream_t s : streams())
    for (size_t count : matrixCounts())
      for (spcclDataType_t type : kAllTypes)
        for (bool inPlace : {false, true})
          for (spcclRedOp_t op : kAllOps) {
            checkAllReduce(s, type, op, count, inPlace);
            checkReduce(s, type, op, count, inPlace, round++ % nranks());
            checkReduceScatter(s, type, op, count, inPlace);
          }
}

TEST_F(GpuCollectives, DataMovementEveryTypeCountAndStream) {
  int round = 0;
  for (cudaStream_t s : streams())
    for (size_t count : matrixCounts())
      for (spcclDataType_t type : kAllTypes) {
        for (bool inPlace : {false, true}) {
          checkBroadcast(s, type, count, inPlace, round++ % nranks());
          checkAllGather(s, type, count, inPlace);
          checkAllToAll(s, type, count, inPlace);
          checkAllToAllv(s, type, count, inPlace);
        }
        checkSendRecvRing(s, type, count);
        checkScatter(s, type, count, round % nranks());
        checkGather(s, type, count, round++ % nranks());
      }
}

// Sizes that take the pipelined paths (several slices).
TEST_F(GpuCollectives, LargerCounts) {
  const size_t count = smallRun() ? 4099 : 262147;
  int round = 0;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : {spcclFloat32, spcclBfloat16, spcclInt64}) {
      for (spcclRedOp_t op : {spcclSum, spcclMax, spcclAvg}) {
        checkAllReduce(s, type, op, count, false);
        checkReduce(s, type, op, count, true, round++ % nranks());
        checkReduceScatter(s, type, op, count / nranks() + 1, false);
      }
      checkBroadcast(s, type, count, false, round++ % nranks());
      checkAllGather(s, type, count / nranks() + 1, true);
      checkAllToAll(s, type, count / nranks() + 1, false);
      checkAllToAllv(s, type, count / nranks() + 1);
      checkSendRecvRing(s, type, count);
    }
}

// One 64 MiB all-reduce (16 M floats) on the created stream.
TEST_F(GpuCollectives, AllReduce64MiB) {
  if (smallRun()) GTEST_SKIP() << "SPCCL_GPU_COLL_SMALL";
  const auto start = std::chrono::steady_clock::now();
  checkAllReduce(stream(), spcclFloat32, spcclSum, size_t{16} << 20, false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank() == 0)
    std::printf("timing: AllReduce 64 MiB f32 on %d ranks, device memory: %.3f s (with checks)\n",
                nranks(), seconds);
}

// Three all-reduces of different types, ops and sizes in one group, the
// last in place, on each stream form: on one host they run device-resident,
// one after the other (core/device_group.h); run_device_all_reduce.sh
// requires the staging report to count them.
TEST_F(GpuCollectives, GroupedAllReduces) {
  struct Planned {
    spcclDataType_t type;
    spcclRedOp_t op;
    size_t count;
    bool inPlace;
  };
  const Planned calls[] = {{spcclFloat32, spcclSum, 4097, false},
                           {spcclBfloat16, spcclAvg, 1000, false},
                           {spcclInt64, spcclMax, 5, true}};
  const World& w = world();
  for (cudaStream_t s : streams()) {
    std::vector<std::unique_ptr<KindBuffer>> sends, recvs;
    std::vector<std::vector<char>> expected;
    std::vector<std::string> whats;
    for (const Planned& p : calls) {
      const size_t bytes = p.count * spcclTypeSize(p.type);
      std::vector<char> send = hostBuffer(p.type, p.count), want = hostBuffer(p.type, p.count);
      for (size_t i = 0; i < p.count; ++i) {
        store(p.type, send.data(), i, reductionInput(p.op, w.rank, i, w.nranks));
        store(p.type, want.data(), i, reductionReference(p.type, p.op, i, w.nranks));
      }
      sends.push_back(std::make_unique<KindBuffer>(deviceKind(), bytes));
      sends.back()->upload(send.data(), bytes, s);
      recvs.push_back(std::make_unique<KindBuffer>(deviceKind(), bytes));
      expected.push_back(std::move(want));
      whats.push_back(describe("grouped AllReduce", p.type, p.op, p.count, p.inPlace, s));
    }
    auto out = [&](size_t k) -> KindBuffer& { return calls[k].inPlace ? *sends[k] : *recvs[k]; };
    expectSuccess(spcclGroupStart(), "spcclGroupStart");
    for (size_t k = 0; k < std::size(calls); ++k)
      expectSuccess(spcclAllReduce(sends[k]->get(), out(k).get(), calls[k].count, calls[k].type,
                                   calls[k].op, w.comm, s),
                    whats[k]);
    expectSuccess(spcclGroupEnd(),
                  std::string("spcclGroupEnd of three all-reduces, ") + streamName(s));
    for (size_t k = 0; k < std::size(calls); ++k)
      expectElements(expected[k], out(k).download(s), calls[k].type, calls[k].count, whats[k]);
  }
}

// FSDP's group and the rooted calls, in one group on each stream form: a
// reduce-scatter (bfloat16, avg), an all-gather in place, a broadcast
// whose non-roots pass no sendbuff and a reduce whose non-roots pass no
// recvbuff (the root: the last rank). On one host they run
// device-resident one after the other (core/device_group.h);
// run_device_all_reduce.sh requires the staging report to count them.
TEST_F(GpuCollectives, GroupedCollectives) {
  const World& w = world();
  const int root = w.nranks - 1;
  const size_t count = 1000, n = static_cast<size_t>(w.nranks);
  const spcclDataType_t rsType = spcclBfloat16, agType = spcclFloat32, castType = spcclFloat32,
                        reduceType = spcclInt64;
  const size_t rsSize = spcclTypeSize(rsType), agSize = spcclTypeSize(agType),
               castSize = spcclTypeSize(castType), reduceSize = spcclTypeSize(reduceType);
  for (cudaStream_t s : streams()) {
    std::vector<char> rsIn = hostBuffer(rsType, count * n), rsWant = hostBuffer(rsType, count);
    for (size_t i = 0; i < count * n; ++i)
      store(rsType, rsIn.data(), i, reductionInput(spcclAvg, w.rank, i, w.nranks));
    for (size_t i = 0; i < count; ++i)
      store(rsType, rsWant.data(), i,
            reductionReference(rsType, spcclAvg, w.rank * count + i, w.nranks));
    std::vector<char> agIn = hostBuffer(agType, count), agWant = hostBuffer(agType, count * n);
    for (size_t i = 0; i < count; ++i) store(agType, agIn.data(), i, tagValue(w.rank, 0, i));
    for (int r = 0; r < w.nranks; ++r)
      for (size_t i = 0; i < count; ++i)
        store(agType, agWant.data(), r * count + i, tagValue(r, 0, i));
    std::vector<char> castWant = hostBuffer(castType, count);
    for (size_t i = 0; i < count; ++i) store(castType, castWant.data(), i, tagValue(root, 1, i));
    std::vector<char> reduceIn = hostBuffer(reduceType, count),
                      reduceWant = hostBuffer(reduceType, count);
    for (size_t i = 0; i < count; ++i) {
      store(reduceType, reduceIn.data(), i, reductionInput(spcclMax, w.rank, i, w.nranks));
      store(reduceType, reduceWant.data(), i,
            reductionReference(reduceType, spcclMax, i, w.nranks));
    }
    KindBuffer rsSend(deviceKind(), count * n * rsSize), rsRecv(deviceKind(), count * rsSize);
    KindBuffer agBuffer(deviceKind(), count * n * agSize);
    KindBuffer castSend(deviceKind(), count * castSize), castRecv(deviceKind(), count * castSize);
    KindBuffer reduceSend(deviceKind(), count * reduceSize),
        reduceRecv(deviceKind(), count * reduceSize);
    rsSend.upload(rsIn.data(), rsIn.size(), s);
    agBuffer.upload(agIn.data(), count * agSize, s, w.rank * count * agSize);
    if (w.rank == root) castSend.upload(castWant.data(), count * castSize, s);
    reduceSend.upload(reduceIn.data(), count * reduceSize, s);
    const std::string what = std::string("rank ") + std::to_string(w.rank) +
                             ": grouped reduce-scatter, all-gather, broadcast, reduce, " +
                             streamName(s);
    expectSuccess(spcclGroupStart(), "spcclGroupStart");
    expectSuccess(
        spcclReduceScatter(rsSend.get(), rsRecv.get(), count, rsType, spcclAvg, w.comm, s), what);
    expectSuccess(spcclAllGather(agBuffer.as<char>() + w.rank * count * agSize, agBuffer.get(),
                                 count, agType, w.comm, s),
                  what);
    expectSuccess(spcclBroadcast(w.rank == root ? castSend.get() : nullptr, castRecv.get(), count,
                                 castType, root, w.comm, s),
                  what);
    expectSuccess(spcclReduce(reduceSend.get(), w.rank == root ? reduceRecv.get() : nullptr, count,
                              reduceType, spcclMax, root, w.comm, s),
                  what);
    expectSuccess(spcclGroupEnd(), "spcclGroupEnd, " + what);
    expectElements(rsWant, rsRecv.download(s), rsType, count, what + ": reduce-scatter");
    expectElements(agWant, agBuffer.download(s), agType, count * n, what + ": all-gather");
    expectElements(castWant, castRecv.download(s), castType, count, what + ": broadcast");
    if (w.rank == root)
      expectElements(reduceWant, reduceRecv.download(s), reduceType, count, what + ": reduce");
  }
}

// ---- memory kinds ----

TEST_F(GpuCollectives, PinnedManagedAndHostMemory) {
  if (!world().whyNoGpu.empty()) GTEST_SKIP() << "no usable CUDA device: " << world().whyNoGpu;
  for (MemoryKind kind : {MemoryKind::Pinned, MemoryKind::Managed, MemoryKind::Host})
    for (cudaStream_t s : streams())
      for (spcclDataType_t type : {spcclFloat32, spcclInt32, spcclBfloat16})
        for (bool inPlace : {false, true}) checkAllReduce(s, type, spcclSum, 4097, inPlace, kind);
  // A gather and a sparse all-reduce on managed memory, both stream forms.
  for (cudaStream_t s : streams()) {
    const size_t count = 1000, total = count * nranks();
    KindBuffer send(MemoryKind::Managed, count * 4), recv(MemoryKind::Managed, total * 4);
    std::vector<char> mine = hostBuffer(spcclInt32, count),
                      expected = hostBuffer(spcclInt32, total);
    for (size_t i = 0; i < count; ++i) store(spcclInt32, mine.data(), i, tagValue(rank(), 0, i));
    for (int r = 0; r < nranks(); ++r)
      for (size_t i = 0; i < count; ++i)
        store(spcclInt32, expected.data(), r * count + i, tagValue(r, 0, i));
    send.upload(mine.data(), count * 4, s);
    const std::string what =
        describe("AllGather", spcclInt32, spcclSum, count, false, s, MemoryKind::Managed);
    expectSuccess(spcclAllGather(send.get(), recv.get(), count, spcclInt32, comm(), s), what);
    expectElements(expected, recv.download(s), spcclInt32, total, what);
  }
}

// Device and plain host memory in one call: rejected, naming the argument;
// the communicator stays usable.
bool namesABuffer(const char* message, std::initializer_list<const char*> names) {
  const std::string text = message;
  for (const char* name : names)
    if (text.find(name) != std::string::npos) return true;
  return false;
}

TEST_F(GpuCollectives, MixedHostAndDeviceRejected) {
  if (selfCheck()) GTEST_SKIP() << "needs device memory (SPCCL_GPU_COLL_HOST_SELF_CHECK)";
  const size_t count = 1024;
  for (cudaStream_t s : streams()) {
    for (bool deviceSend : {true, false}) {
      KindBuffer a(deviceSend ? deviceKind() : MemoryKind::Host, count * 4 * nranks());
      KindBuffer b(deviceSend ? MemoryKind::Host : deviceKind(), count * 4 * nranks());
      const std::string how = std::string(deviceSend ? "device send, host recv"
                                                     : "host send, "
                                                       "device recv") +
                              ", " + streamName(s);
      struct Call {
        const char* name;
        spcclResult_t result;
      };
      spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
      std::vector<Call> calls;
      calls.push_back({"AllReduce",
                       spcclAllReduce(a.get(), b.get(), count, spcclFloat32, spcclSum, comm(), s)});
      EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"sendbuff", "recvbuff"}))
          << "AllReduce, " << how << ": " << spcclGetLastError(comm());
      // Broadcast reads sendbuff on the root alone: there the mix is an
      // error, and the other ranks' side of the call fails with it. On a
      // stream that failure is the communicator's async error (NCCL's
      // contract: abort after one), so the mix is tried on one rank only.
      if (nranks() == 1) {
        calls.push_back(
            {"Broadcast", spcclBroadcast(a.get(), b.get(), count, spcclFloat32, 0, comm(), s)});
        EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"sendbuff", "recvbuff"}))
            << "Broadcast, " << how << ": " << spcclGetLastError(comm());
      }
      calls.push_back(
          {"AllGather", spcclAllGather(a.get(), b.get(), count, spcclFloat32, comm(), s)});
      EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"sendbuff", "recvbuff"}))
          << "AllGather, " << how << ": " << spcclGetLastError(comm());
      calls.push_back({"SparseAllReduce", spcclSparseAllReduce(a.get(), b.get(), count,
                                                               spcclFloat32, spcclSum, comm(), s)});
      EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"sendbuff", "recvbuff"}))
          << "SparseAllReduce, " << how << ": " << spcclGetLastError(comm());
      calls.push_back(
          {"CompressedAllReduce", spcclCompressedAllReduce(a.get(), b.get(), count, spcclFloat32,
                                                           spcclSum, &cfg, comm(), s)});
      EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"sendbuff", "recvbuff"}))
          << "CompressedAllReduce, " << how << ": " << spcclGetLastError(comm());
      for (const Call& call : calls)
        EXPECT_EQ(call.result, spcclInvalidArgument) << call.name << ", " << how;
    }
    // COO: indices and values on the device, recvbuff on the host.
    KindBuffer indices(deviceKind(), 16 * 4), values(deviceKind(), 16 * 4);
    KindBuffer hostOut(MemoryKind::Host, count * 4);
    std::vector<uint32_t> idx(16);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint32_t>(i * 7);
    indices.upload(idx.data(), idx.size() * 4, s);
    EXPECT_EQ(spcclSparseAllReduceCoo(indices.get(), spcclIndexUint32, values.get(), 16, count,
                                      spcclFloat32, spcclSum, hostOut.get(), nullptr, comm(), s),
              spcclInvalidArgument)
        << "SparseAllReduceCoo, device indices and values, host recvbuff, " << streamName(s);
    EXPECT_TRUE(namesABuffer(spcclGetLastError(comm()), {"recvbuff", "values", "indices"}))
        << spcclGetLastError(comm());
  }
  // Still usable.
  for (cudaStream_t s : streams()) checkAllReduce(s, spcclFloat32, spcclSum, count, false);
}

// ---- stream order ----

// Many calls queued back to back on one stream, each reading the previous
// one's output, then one synchronisation: every intermediate is right.
TEST_F(GpuCollectives, ManyCallsQueuedThenOneSync) {
  constexpr int kCalls = 32;
  const size_t count = smallRun() ? 513 : 65537;
  const cudaStream_t s = stream();
  std::vector<std::unique_ptr<KindBuffer>> chain;
  for (int k = 0; k <= kCalls; ++k)
    chain.push_back(std::make_unique<KindBuffer>(deviceKind(), count * 8));
  std::vector<uint64_t> first(count), expected(count);
  for (size_t i = 0; i < count; ++i) {
    first[i] = static_cast<uint64_t>(rank()) * 1000003u + i * 0x9e3779b97f4a7c15ull;
    expected[i] = 0;
    for (int r = 0; r < nranks(); ++r)
      expected[i] += static_cast<uint64_t>(r) * 1000003u + i * 0x9e3779b97f4a7c15ull;
  }
  chain[0]->upload(first.data(), count * 8, s);
  // Odd steps all-reduce into the next buffer; even steps broadcast it there
  // from a rotating root (same values on every rank by then).
  for (int k = 1; k <= kCalls; ++k) {
    if (k % 2 == 1)
      expectSuccess(spcclAllReduce(chain[k - 1]->get(), chain[k]->get(), count, spcclUint64,
                                   spcclSum, comm(), s),
                    "queued AllReduce " + std::to_string(k));
    else
      expectSuccess(spcclBroadcast(chain[k - 1]->get(), chain[k]->get(), count, spcclUint64,
                                   k % nranks(), comm(), s),
                    "queued Broadcast " + std::to_string(k));
  }
  if (s != nullptr) SPCCL_CUDA_OR_DIE(cudaStreamSynchronize(s));
  for (int k = 1; k <= kCalls; ++k) {
    // All-reduces after the first sum n equal inputs; broadcasts copy.
    if (k % 2 == 1 && k > 1)
      for (uint64_t& v : expected) v *= static_cast<uint64_t>(nranks());
    std::vector<unsigned char> got = chain[k]->download(nullptr);
    std::vector<char> want(count * 8);
    std::memcpy(want.data(), expected.data(), count * 8);
    expectElements(want, got, spcclUint64, count,
                   "rank " + std::to_string(rank()) + ": chain step " + std::to_string(k));
  }
}

// A kernel that writes the input late, right before the call on the same
// stream; a memset of the input right after the call; and a memset of the
// input right before another call.
TEST_F(GpuCollectives, InputWrittenOnTheStreamAroundTheCall) {
  if (selfCheck()) GTEST_SKIP() << "needs device memory (SPCCL_GPU_COLL_HOST_SELF_CHECK)";
  const cudaStream_t s = world().stream;
  for (size_t count : {size_t{1}, size_t{4097}, smallRun() ? size_t{8193} : size_t{1} << 20}) {
    const size_t bytes = count * 4;
    std::vector<char> input = hostBuffer(spcclFloat32, count),
                      expected = hostBuffer(spcclFloat32, count);
    for (size_t i = 0; i < count; ++i) {
      store(spcclFloat32, input.data(), i, reductionInput(spcclSum, rank(), i, nranks()));
      store(spcclFloat32, expected.data(), i,
            reductionReference(spcclFloat32, spcclSum, i, nranks()));
    }
    KindBuffer source(deviceKind(), bytes), send(deviceKind(), bytes), recv(deviceKind(), bytes);
    source.upload(input.data(), bytes, s);
    const std::string what =
        "rank " + std::to_string(rank()) + ": count " + std::to_string(count) + ": ";
    // The kernel waits 20 ms before it writes send.
    SPCCL_CUDA_OR_DIE(spccl::gpu_test::delayedCopy(send.get(), source.get(), bytes, 20000, s));
    expectSuccess(spcclAllReduce(send.get(), recv.get(), count, spcclFloat32, spcclSum, comm(), s),
                  what + "AllReduce after a late kernel");
    // Overwritten right after the call: the call must have read it first.
    SPCCL_CUDA_OR_DIE(cudaMemsetAsync(send.get(), 0xff, bytes, s));
    expectElements(expected, recv.download(s), spcclFloat32, count,
                   what + "AllReduce of an input a late kernel wrote");
    // A memset right before the call: each int32 is 0x01010101.
    SPCCL_CUDA_OR_DIE(cudaMemsetAsync(send.get(), 0x01, bytes, s));
    expectSuccess(spcclAllReduce(send.get(), recv.get(), count, spcclInt32, spcclSum, comm(), s),
                  what + "AllReduce after a memset");
    std::vector<char> sums(bytes);
    for (size_t i = 0; i < count; ++i)
      store(spcclInt32, sums.data(), i, int64_t{0x01010101} * nranks());
    expectElements(sums, recv.download(s), spcclInt32, count, what + "AllReduce of a memset input");
    // A sparse all-reduce on the late kernel's input as well.
    SPCCL_CUDA_OR_DIE(cudaMemsetAsync(send.get(), 0, bytes, s));
    SPCCL_CUDA_OR_DIE(spccl::gpu_test::delayedCopy(send.get(), source.get(), bytes, 20000, s));
    expectSuccess(
        spcclSparseAllReduce(send.get(), recv.get(), count, spcclFloat32, spcclSum, comm(), s),
        what + "SparseAllReduce after a late kernel");
    expectElements(expected, recv.download(s), spcclFloat32, count,
                   what + "SparseAllReduce of an input a late kernel wrote");
  }
}

// ---- non-blocking forms on device memory ----

// request is read after the call that sets it (not an argument evaluated
// before it).
void waitFor(spcclResult_t issued, const spcclRequest_t* request, const std::string& what) {
  expectSuccess(issued, what + " (issue)");
  if (issued == spcclSuccess) expectSuccess(spcclWait(*request), what + " (wait)");
}

TEST_F(GpuCollectives, NonBlockingFormsOnDeviceMemory) {
  const spcclDataType_t type = spcclFloat32;
  const size_t count = 4097, total = count * nranks(), es = 4;
  const int root = nranks() - 1;
  std::vector<char> reduceIn = hostBuffer(type, total), reduced = hostBuffer(type, total),
                    tagged = hostBuffer(type, total), gathered = hostBuffer(type, total),
                    toAll = hostBuffer(type, total), fromAll = hostBuffer(type, total);
  for (size_t i = 0; i < total; ++i) {
    store(type, reduceIn.data(), i, reductionInput(spcclSum, rank(), i, nranks()));
    store(type, reduced.data(), i, reductionReference(type, spcclSum, i, nranks()));
    store(type, gathered.data(), i, tagValue(static_cast<int>(i / count), 0, i % count));
  }
  for (size_t i = 0; i < count; ++i) store(type, tagged.data(), i, tagValue(root, 0, i));
  for (int peer = 0; peer < nranks(); ++peer)
    for (size_t i = 0; i < count; ++i) {
      store(type, toAll.data(), peer * count + i, tagValue(rank(), peer, i));
      store(type, fromAll.data(), peer * count + i, tagValue(peer, rank(), i));
    }
  const std::string who = "rank " + std::to_string(rank()) + ": ";
  spcclRequest_t request = nullptr;
  {
    KindBuffer send(deviceKind(), count * es), recv(deviceKind(), count * es);
    send.upload(reduceIn.data(), count * es, nullptr);
    waitFor(spcclIallReduce(send.get(), recv.get(), count, type, spcclSum, comm(), &request),
            &request, who + "IallReduce");
    expectElements(reduced, recv.download(nullptr), type, count, who + "IallReduce");
    waitFor(spcclIreduce(send.get(), recv.get(), count, type, spcclSum, root, comm(), &request),
            &request, who + "Ireduce");
    std::vector<unsigned char> got = recv.download(nullptr);
    if (rank() == root) expectElements(reduced, got, type, count, who + "Ireduce");
  }
  {
    KindBuffer buff(deviceKind(), count * es);
    if (rank() == root) buff.upload(tagged.data(), count * es, nullptr);
    waitFor(spcclIbroadcast(buff.get(), buff.get(), count, type, root, comm(), &request), &request,
            who + "Ibroadcast");
    expectElements(tagged, buff.download(nullptr), type, count, who + "Ibroadcast");
  }
  {
    KindBuffer send(deviceKind(), count * es), recv(deviceKind(), total * es);
    std::vector<char> mine = hostBuffer(type, count);
    for (size_t i = 0; i < count; ++i) store(type, mine.data(), i, tagValue(rank(), 0, i));
    send.upload(mine.data(), count * es, nullptr);
    waitFor(spcclIallGather(send.get(), recv.get(), count, type, comm(), &request), &request,
            who + "IallGather");
    expectElements(gathered, recv.download(nullptr), type, total, who + "IallGather");
  }
  {
    KindBuffer send(deviceKind(), total * es), recv(deviceKind(), total * es);
    send.upload(reduceIn.data(), total * es, nullptr);
    waitFor(spcclIreduceScatter(send.get(), recv.get(), count, type, spcclSum, comm(), &request),
            &request, who + "IreduceScatter");
    std::vector<char> mine(reduced.begin() + rank() * count * es,
                           reduced.begin() + (rank() + 1) * count * es);
    expectElements(mine, recv.download(nullptr), type, count, who + "IreduceScatter");
    send.upload(toAll.data(), total * es, nullptr);
    waitFor(spcclIallToAll(send.get(), recv.get(), count, type, comm(), &request), &request,
            who + "IallToAll");
    expectElements(fromAll, recv.download(nullptr), type, total, who + "IallToAll");
  }
  {  // The compressed and token-mask forms equal their blocking forms.
    const std::vector<spccl::testing::TypedBuffer> inputs = [&] {
      std::vector<spccl::testing::TypedBuffer> all;
      for (int r = 0; r < nranks(); ++r) all.push_back(spccl::testing::inputOf(r, type, count, 7));
      return all;
    }();
    spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
    KindBuffer send(deviceKind(), count * es), blocking(deviceKind(), count * es),
        nonBlocking(deviceKind(), count * es);
    send.upload(inputs[rank()].bytes.data(), count * es, nullptr);
    expectSuccess(spcclCompressedAllReduce(send.get(), blocking.get(), count, type, spcclSum, &cfg,
                                           comm(), nullptr),
                  who + "CompressedAllReduce");
    waitFor(spcclIcompressedAllReduce(send.get(), nonBlocking.get(), count, type, spcclSum, &cfg,
                                      comm(), &request),
            &request, who + "IcompressedAllReduce");
    EXPECT_EQ(blocking.download(nullptr), nonBlocking.download(nullptr))
        << who << "IcompressedAllReduce differs from CompressedAllReduce";
    spccl::testing::TypedBuffer out(type, count);
    std::vector<unsigned char> got = nonBlocking.download(nullptr);
    std::memcpy(out.bytes.data(), got.data(), count * es);
    EXPECT_EQ(spccl::testing::compressedBoundViolation(inputs, out, cfg.codec, cfg.bits,
                                                       cfg.blockSize, cfg.schedule, spcclSum),
              "")
        << who << "IcompressedAllReduce";
  }
}

// ---- sparse all-reduce ----

using spccl::sparse_inputs::isNonZero;
using spccl::sparse_inputs::Overlap;
using spccl::sparse_inputs::smallValue;

// This rank's dense input at `density`: small non-zero integers at the
// chosen positions, zero elsewhere.
std::vector<char> sparseInput(spcclDataType_t type, size_t count, double density) {
  std::vector<char> input(std::max<size_t>(count, 1) * spcclTypeSize(type), 0);
  for (size_t i = 0; i < count; ++i)
    if (isNonZero(Overlap::Random, density, i, world().rank, world().nranks, count))
      store(type, input.data(), i, smallValue(i, world().rank));
  return input;
}

// The reference: the dense all-reduce of the same input on host memory.
std::vector<char> denseReference(const std::vector<char>& input, spcclDataType_t type,
                                 spcclRedOp_t op, size_t count) {
  std::vector<char> out(input.size(), '\x5a');
  expectSuccess(spcclAllReduce(input.data(), out.data(), count, type, op, world().comm, nullptr),
                "reference AllReduce (host)");
  return out;
}

const spcclSparseAlgorithm_t kSparseAlgorithms[] = {
    spcclSparseAuto,         spcclSparseBalancedParallelism,
    spcclSparseHierarchical, spcclSparseAllGather,
    spcclSparseBlock,        spcclSparseDense};

const char* algorithmName(spcclSparseAlgorithm_t a) {
  static const char* const names[] = {
      "auto", "balanced-parallelism", "hierarchical", "all-gather", "block", "dense"};
  return names[static_cast<int>(a)];
}

TEST_F(GpuCollectives, SparseAllReduceDenseFormBitwise) {
  const size_t count = smallRun() ? 3001 : 100003;
  for (cudaStream_t s : streams())
    for (double density : {0.0, 0.01, 0.5})
      for (spcclDataType_t type : {spcclFloat32, spcclInt32, spcclBfloat16, spcclFloat16})
        for (spcclSparseAlgorithm_t algorithm : kSparseAlgorithms)
          for (bool inPlace : {false, true}) {
            const spcclRedOp_t op = type == spcclFloat16 ? spcclAvg : spcclSum;
            const size_t es = spcclTypeSize(type);
            const std::string what = describe("SparseAllReduce", type, op, count, inPlace, s) +
                                     " density " + std::to_string(density) + " " +
                                     algorithmName(algorithm);
            const std::vector<char> input = sparseInput(type, count, density);
            const std::vector<char> expected = denseReference(input, type, op, count);
            KindBuffer send(deviceKind(), count * es), recv(deviceKind(), count * es);
            send.upload(input.data(), count * es, s);
            KindBuffer& out = inPlace ? send : recv;
            spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
            options.algorithm = algorithm;
            options.tag = 7000 + static_cast<uint64_t>(algorithm);
            if (algorithm == spcclSparseAuto)
              expectSuccess(spcclSparseAllReduce(send.get(), out.get(), count, type, op, comm(), s),
                            what);
            else
              expectSuccess(spcclSparseAllReduceWithOptions(send.get(), out.get(), count, type, op,
                                                            &options, comm(), s),
                            what);
            const std::vector<unsigned char> got = out.download(s);
            expectElements(expected, got, type, count, what);
            expectSameOnEveryRank(got.data(), count * es, what);
          }
}

// COO in (unsorted, with duplicates), dense out; and COO out.
TEST_F(GpuCollectives, SparseAllReduceCooForms) {
  const size_t count = smallRun() ? 2003 : 50021;
  const spcclDataType_t type = spcclFloat32;
  for (double density : {0.0, 0.01, 0.5})
    for (spcclIndexType_t indexType : {spcclIndexUint32, spcclIndexUint64}) {
      const std::vector<char> dense = sparseInput(type, count, density);
      const std::vector<char> expected = denseReference(dense, type, spcclSum, count);
      // Entries in descending index order; every third one split into two
      // (v - 1 and 1) with the second at the end: unsorted, duplicates.
      std::vector<uint64_t> indices;
      std::vector<float> values;
      std::vector<uint64_t> extraIndices;
      for (size_t i = count; i-- > 0;) {
        float v;
        std::memcpy(&v, dense.data() + i * 4, 4);
        if (v == 0) continue;
        indices.push_back(i);
        values.push_back(i % 3 == 0 ? v - 1 : v);
        if (i % 3 == 0) extraIndices.push_back(i);
      }
      for (uint64_t i : extraIndices) {
        indices.push_back(i);
        values.push_back(1);
      }
      const size_t nnz = indices.size();
      const size_t indexBytes = indexType == spcclIndexUint32 ? 4 : 8;
      std::vector<unsigned char> packedIndices(std::max<size_t>(nnz, 1) * indexBytes);
      for (size_t k = 0; k < nnz; ++k) {
        if (indexType == spcclIndexUint32) {
          const uint32_t i32 = static_cast<uint32_t>(indices[k]);
          std::memcpy(packedIndices.data() + 4 * k, &i32, 4);
        } else {
          std::memcpy(packedIndices.data() + 8 * k, &indices[k], 8);
        }
      }
      KindBuffer dIndices(deviceKind(), nnz * indexBytes), dValues(deviceKind(), nnz * 4);
      dIndices.upload(packedIndices.data(), nnz * indexBytes, nullptr);
      dValues.upload(values.data(), nnz * 4, nullptr);
      for (cudaStream_t s : streams()) {
        const std::string what = describe("SparseAllReduceCoo", type, spcclSum, count, false, s) +
                                 " density " + std::to_string(density) +
                                 (indexType == spcclIndexUint32 ? " u32" : " u64");
        KindBuffer recv(deviceKind(), count * 4);
        expectSuccess(spcclSparseAllReduceCoo(dIndices.get(), indexType, dValues.get(), nnz, count,
                                              type, spcclSum, recv.get(), nullptr, comm(), s),
                      what);
        const std::vector<unsigned char> got = recv.download(s);
        expectElements(expected, got, type, count, what);
        expectSameOnEveryRank(got.data(), count * 4, what);
      }
      // COO out (NULL stream: *outNnz is a host value the call returns).
      const std::string what =
          describe("SparseAllReduceCooToCoo", type, spcclSum, count, false, nullptr) + " density " +
          std::to_string(density);
      KindBuffer outIndices(deviceKind(), count * indexBytes), outValues(deviceKind(), count * 4);
      size_t outNnz = ~size_t{0};
      expectSuccess(
          spcclSparseAllReduceCooToCoo(dIndices.get(), indexType, dValues.get(), nnz, count, type,
                                       spcclSum, outIndices.get(), outValues.get(), count, &outNnz,
                                       nullptr, comm(), nullptr),
          what);
      if (outNnz > count) {
        ADD_FAILURE() << what << ": outNnz " << outNnz;
        continue;
      }
      const std::vector<unsigned char> gotIndices = outIndices.download(nullptr);
      const std::vector<unsigned char> gotValues = outValues.download(nullptr);
      // Ascending indices, each value the reference's, every non-zero listed.
      std::vector<char> listed(count, 0);
      uint64_t previous = 0;
      for (size_t k = 0; k < outNnz; ++k) {
        uint64_t index = 0;
        if (indexType == spcclIndexUint32) {
          uint32_t i32;
          std::memcpy(&i32, gotIndices.data() + 4 * k, 4);
          index = i32;
        } else {
          std::memcpy(&index, gotIndices.data() + 8 * k, 8);
        }
        if (index >= count || (k > 0 && index <= previous)) {
          ADD_FAILURE() << what << ": entry " << k << " has index " << index << " after "
                        << previous;
          break;
        }
        previous = index;
        listed[index] = 1;
        if (std::memcmp(gotValues.data() + 4 * k, expected.data() + index * 4, 4) != 0) {
          ADD_FAILURE() << what << ": index " << index << " has " << load(type, gotValues.data(), k)
                        << ", expected " << load(type, expected.data(), index);
          break;
        }
      }
      for (size_t i = 0; i < count; ++i) {
        float v;
        std::memcpy(&v, expected.data() + i * 4, 4);
        if (v != 0 && !listed[i]) {
          ADD_FAILURE() << what << ": non-zero index " << i << " missing from the output";
          break;
        }
      }
      expectSameOnEveryRank(gotValues.data(), outNnz * 4, what + " values");
    }
}

// ---- compressed all-reduce ----

TEST_F(GpuCollectives, CompressedAllReduceWithinBound) {
  const size_t count = smallRun() ? 1500 : 20011;
  uint64_t salt = 0;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : kFloatTypes)
      for (spcclRedOp_t op : {spcclSum, spcclAvg})
        for (spcclCompressSchedule_t schedule : {spcclCompressTwoShot, spcclCompressRing}) {
          ++salt;
          spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
          cfg.schedule = schedule;
          cfg.codec = salt % 2 ? spcclCodecPiecewise : spcclCodecLinear;
          cfg.bits = salt % 2 ? 4 : 8;
          cfg.blockSize = salt % 3 == 0 ? 7 : 0;
          const bool inPlace = salt % 4 == 1;
          const size_t es = spcclTypeSize(type);
          std::vector<spccl::testing::TypedBuffer> inputs;
          for (int r = 0; r < nranks(); ++r)
            inputs.push_back(spccl::testing::inputOf(r, type, count, salt));
          const std::string what = describe("CompressedAllReduce", type, op, count, inPlace, s) +
                                   (schedule == spcclCompressRing ? " ring" : " two-shot") + " " +
                                   std::to_string(cfg.bits) + " bits";
          KindBuffer send(deviceKind(), count * es), recv(deviceKind(), count * es);
          send.upload(inputs[rank()].bytes.data(), count * es, s);
          KindBuffer& out = inPlace ? send : recv;
          expectSuccess(
              spcclCompressedAllReduce(send.get(), out.get(), count, type, op, &cfg, comm(), s),
              what);
          spccl::testing::TypedBuffer result(type, count);
          const std::vector<unsigned char> got = out.download(s);
          std::memcpy(result.bytes.data(), got.data(), count * es);
          EXPECT_EQ(spccl::testing::compressedBoundViolation(inputs, result, cfg.codec, cfg.bits,
                                                             cfg.blockSize, schedule, op),
                    "")
              << what;
          expectSameOnEveryRank(got.data(), count * es, what);
        }
}

// ---- token top-k and mask ----

TEST_F(GpuCollectives, TokenTopkAndMask) {
  const size_t tokens = 64, hidden = 96, elements = tokens * hidden;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : kFloatTypes)
      for (size_t keep : {size_t{0}, size_t{16}, tokens}) {
        const size_t es = spcclTypeSize(type);
        const std::string what = describe("TokenTopkAllReduce", type, spcclSum, elements, true, s) +
                                 " keep " + std::to_string(keep);
        std::vector<char> input = hostBuffer(type, elements), sums = hostBuffer(type, elements);
        for (size_t i = 0; i < elements; ++i) {
          store(type, input.data(), i, reductionInput(spcclSum, rank(), i, nranks()));
          store(type, sums.data(), i, reductionReference(type, spcclSum, i, nranks()));
        }
        const std::vector<unsigned char> mask =
            spccl::testing::referenceMask(nranks(), tokens, keep);
        const std::vector<float> scores = spccl::testing::scoresOf(rank(), tokens);
        // Kept rows: the exact sums (cfg NULL); pruned rows: zero.
        std::vector<char> expected(elements * es, 0);
        for (size_t t = 0; t < tokens; ++t)
          if (mask[t]) std::memcpy(&expected[t * hidden * es], &sums[t * hidden * es], hidden * es);
        KindBuffer buff(deviceKind(), elements * es), dScores(deviceKind(), tokens * 4),
            maskOut(deviceKind(), tokens);
        buff.upload(input.data(), elements * es, s);
        dScores.upload(scores.data(), tokens * 4, s);
        expectSuccess(spcclTokenTopkAllReduce(buff.get(), dScores.as<float>(), tokens, hidden, type,
                                              spcclSum, keep, nullptr, spcclPruneZero,
                                              maskOut.as<unsigned char>(), comm(), s),
                      what);
        const std::vector<unsigned char> got = buff.download(s);
        expectElements(expected, got, type, elements, what);
        EXPECT_EQ(maskOut.download(s), mask) << what << ": mask";
        expectSameOnEveryRank(got.data(), elements * es, what);

        // The mask form, keeping this rank's partial sums in pruned rows.
        const std::string maskWhat =
            describe("TokenMaskAllReduce", type, spcclSum, elements, true, s) + " keep " +
            std::to_string(keep);
        std::vector<char> expectedLocal = input;
        for (size_t t = 0; t < tokens; ++t)
          if (mask[t])
            std::memcpy(&expectedLocal[t * hidden * es], &sums[t * hidden * es], hidden * es);
        KindBuffer dMask(deviceKind(), tokens);
        dMask.upload(mask.data(), tokens, s);
        buff.upload(input.data(), elements * es, s);
        expectSuccess(
            spcclTokenMaskAllReduce(buff.get(), dMask.as<unsigned char>(), tokens, hidden, type,
                                    spcclSum, nullptr, spcclPruneKeepLocal, comm(), s),
            maskWhat);
        expectElements(expectedLocal, buff.download(s), type, elements, maskWhat);
      }
}

// ---- migration collectives ----

TEST_F(GpuCollectives, MigrationCollectives) {
  const size_t count = smallRun() ? 1001 : 40009;
  int round = 0;
  for (cudaStream_t s : streams())
    for (spcclDataType_t type : {spcclFloat32, spcclBfloat16, spcclInt32}) {
      const size_t es = spcclTypeSize(type);
      const int straggler = round++ % nranks();
      // All-reduce with each helper's migrated slice folded in.
      // Each rank asks for its own slice and all-gathers it.
      size_t mine[2] = {0, 0};
      ASSERT_EQ(spcclMigrateSlice(comm(), straggler, count, &mine[0], &mine[1]), spcclSuccess);
      std::vector<uint64_t> slices(2 * static_cast<size_t>(nranks()));
      const uint64_t mine64[2] = {mine[0], mine[1]};
      expectSuccess(spcclAllGather(mine64, slices.data(), 2, spcclUint64, comm(), nullptr),
                    "slice all-gather");
      std::vector<char> send = hostBuffer(type, count), expected = hostBuffer(type, count),
                        migrated = hostBuffer(type, std::max<size_t>(mine[1], 1));
      for (size_t i = 0; i < count; ++i) {
        store(type, send.data(), i, reductionInput(spcclSum, rank(), i, nranks()));
        int64_t sum = 0;
        for (int r = 0; r < nranks(); ++r) {
          sum += reductionInput(spcclSum, r, i, nranks());
          if (i >= slices[2 * r] && i < slices[2 * r] + slices[2 * r + 1])
            sum += tagValue(r, 1, i - slices[2 * r]);
        }
        store(type, expected.data(), i, sum);
      }
      for (size_t j = 0; j < mine[1]; ++j) store(type, migrated.data(), j, tagValue(rank(), 1, j));
      const std::string what = describe("MigrateAllReduce", type, spcclSum, count, false, s) +
                               " straggler " + std::to_string(straggler);
      KindBuffer dSend(deviceKind(), count * es), dRecv(deviceKind(), count * es),
          dMigrated(deviceKind(), mine[1] * es);
      dSend.upload(send.data(), count * es, s);
      dMigrated.upload(migrated.data(), mine[1] * es, s);
      expectSuccess(spcclMigrateAllReduce(dSend.get(), dRecv.get(), count, dMigrated.get(), mine[1],
                                          mine[0], type, spcclSum, comm(), s),
                    what);
      expectElements(expected, dRecv.download(s), type, count, what);

      // Broadcast from the straggler.
      const std::string bwhat = describe("MigrateBroadcast", type, spcclSum, count, true, s) +
                                " straggler " + std::to_string(straggler);
      std::vector<char> tagged = hostBuffer(type, count);
      for (size_t i = 0; i < count; ++i) store(type, tagged.data(), i, tagValue(straggler, 2, i));
      KindBuffer dBuff(deviceKind(), count * es);
      if (rank() == straggler) dBuff.upload(tagged.data(), count * es, s);
      expectSuccess(spcclMigrateBroadcast(dBuff.get(), count, type, straggler, comm(), s), bwhat);
      expectElements(tagged, dBuff.download(s), type, count, bwhat);

      // Reduce to the straggler.
      const std::string rwhat = describe("MigrateReduce", type, spcclSum, count, false, s) +
                                " dest " + std::to_string(straggler);
      std::vector<char> reduced = hostBuffer(type, count);
      for (size_t i = 0; i < count; ++i)
        store(type, reduced.data(), i, reductionReference(type, spcclSum, i, nranks()));
      KindBuffer rRecv(deviceKind(), count * es);
      expectSuccess(
          spcclMigrateReduce(dSend.get(), rRecv.get(), count, type, spcclSum, straggler, comm(), s),
          rwhat);
      const std::vector<unsigned char> got = rRecv.download(s);
      if (rank() == straggler) expectElements(reduced, got, type, count, rwhat);
    }
}

// ---- communicator queries of the GPU contract ----

TEST_F(GpuCollectives, CommCuDeviceAndAsyncError) {
  if (selfCheck()) GTEST_SKIP() << "needs device memory (SPCCL_GPU_COLL_HOST_SELF_CHECK)";
  if (spcclCommCuDevice == nullptr || spcclCommGetAsyncError == nullptr) {
    ADD_FAILURE() << "libspccl lacks spcclCommCuDevice or spcclCommGetAsyncError";
    return;
  }
  int device = -1, current = -2;
  SPCCL_CUDA_OR_DIE(cudaGetDevice(&current));
  EXPECT_EQ(spcclCommCuDevice(comm(), &device), spcclSuccess) << spcclGetLastError(comm());
  EXPECT_EQ(device, current);
  EXPECT_EQ(device, 0);
  // Queued work that succeeds leaves no asynchronous error.
  checkAllReduce(world().stream, spcclFloat32, spcclSum, 4097, false);
  spcclResult_t asyncError = spcclInternalError;
  EXPECT_EQ(spcclCommGetAsyncError(comm(), &asyncError), spcclSuccess) << spcclGetLastError(comm());
  EXPECT_EQ(asyncError, spcclSuccess);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  World& w = world();
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess)
    w.whyNoGpu = cudaGetErrorString(status);
  else if (devices == 0)
    w.whyNoGpu = "cudaGetDeviceCount found no device";
  if (w.whyNoGpu.empty() || selfCheck()) {
    if (w.whyNoGpu.empty()) {
      // Every rank on device 0, the current device before the communicator.
      SPCCL_CUDA_OR_DIE(cudaSetDevice(0));
      SPCCL_CUDA_OR_DIE(cudaFree(nullptr));
      SPCCL_CUDA_OR_DIE(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking));
    }
    const spcclResult_t result = spcclCommInitFromEnv(&w.comm, nullptr);
    if (result != spcclSuccess) {
      std::fprintf(stderr, "spcclCommInitFromEnv failed: %s: %s\n", spcclGetErrorString(result),
                   spcclGetLastError(nullptr));
      return 2;
    }
    spcclCommUserRank(w.comm, &w.rank);
    spcclCommCount(w.comm, &w.nranks);
  }
  const int failed = RUN_ALL_TESTS();
  if (w.comm != nullptr) {
    spcclCommDestroy(w.comm);
    if (w.stream != nullptr) cudaStreamDestroy(w.stream);
  }
  return failed;
}

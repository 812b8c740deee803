// Large dense calls cut into pieces (coll/dense_pieces.h) whose device
// buffers are copied piece by piece, overlapping the transfers
// (core/piece_gates.h), against the emulated driver: real ranks, emulated
// device memory and streams. The overlap is shown by order, not by time:
// a gate holds one rank's last copy in, and another rank must see the
// first piece's result arrive on its device before the gate opens.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;

namespace {

// SPCCL_STAGING_CHUNK_BYTES for the ranks forked while it lives.
class PieceBytes {
 public:
  explicit PieceBytes(size_t bytes) { setenv(kName, std::to_string(bytes).c_str(), 1); }
  ~PieceBytes() { unsetenv(kName); }
  PieceBytes(const PieceBytes&) = delete;
  PieceBytes& operator=(const PieceBytes&) = delete;

 private:
  static constexpr const char* kName = "SPCCL_STAGING_CHUNK_BYTES";
};

float valueOf(int rank, size_t i) { return static_cast<float>((rank + 1) * 1000 + i % 97); }

std::vector<float> valuesOf(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = valueOf(rank, i);
  return v;
}

// Floats on the device (emulated) or in host memory, one interface.
class RankFloats {
 public:
  RankFloats(bool device, size_t count, void* stream) : stream_(stream), host_(count) {
    if (device) device_ = std::make_unique<DeviceFloats>(count, stream);
  }
  float* data() { return device_ ? device_->data : host_.data(); }
  void set(const std::vector<float>& values) {
    if (device_) {
      device_->upload(values, stream_);
      cuStreamSynchronize(stream_);
    } else {
      host_ = values;
    }
  }
  std::vector<float> get() const { return device_ ? device_->download(stream_) : host_; }

 private:
  void* stream_;
  std::unique_ptr<DeviceFloats> device_;
  std::vector<float> host_;
};

// Every element of got is expected(i); the first one that is not fails.
void expectAll(const std::vector<float>& got, const std::function<float(size_t)>& expected,
               const char* what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected(i)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", not " << expected(i);
      return;
    }
}

TEST(StagingPieces, EveryCutCollectiveOnStreamsBlockingAndHostRanks) {
  // 2.5 pieces per block; rank 0: device memory and a stream, rank 1:
  // device memory and no stream, rank 2: host memory. Every rank cuts the
  // same way, so they meet whatever their memory.
  const PieceBytes pieces(16384);
  const int n = 3;
  runOnRanks(n, [](int rank, spcclComm_t comm) {
    const size_t count = 4096 * 2 + 2048 + 1;
    void* stream = rank == 0 ? emuCudaStreamCreate() : nullptr;
    const bool device = rank != 2;
    const auto sum = [](size_t i) {
      float s = 0;
      for (int r = 0; r < n; ++r) s += valueOf(r, i);
      return s;
    };
    const auto sync = [&] {
      if (stream != nullptr) cuStreamSynchronize(stream);
    };
    RankFloats send(device, count * n, stream), recv(device, count * n, stream);

    send.set(valuesOf(rank, count * n));
    EXPECT_EQ(spcclAllReduce(send.data(), recv.data(), count, spcclFloat32, spcclSum, comm, stream),
              spcclSuccess);
    sync();
    std::vector<float> out = recv.get();
    out.resize(count);
    expectAll(out, sum, "all-reduce");

    recv.set(valuesOf(rank, count * n));  // in place
    EXPECT_EQ(spcclAllReduce(recv.data(), recv.data(), count, spcclFloat32, spcclSum, comm, stream),
              spcclSuccess);
    sync();
    out = recv.get();
    out.resize(count);
    expectAll(out, sum, "in-place all-reduce");

    recv.set(std::vector<float>(count * n, -1.0f));
    EXPECT_EQ(spcclBroadcast(send.data(), recv.data(), count, spcclFloat32, 1, comm, stream),
              spcclSuccess);
    sync();
    out = recv.get();
    out.resize(count);
    expectAll(
        out, [](size_t i) { return valueOf(1, i); }, "broadcast from rank 1");

    recv.set(std::vector<float>(count * n, -1.0f));
    EXPECT_EQ(spcclReduce(send.data(), recv.data(), count, spcclFloat32, spcclSum, 0, comm, stream),
              spcclSuccess);
    sync();
    out = recv.get();
    out.resize(count);
    if (rank == 0) expectAll(out, sum, "reduce to rank 0");
    if (rank != 0)
      expectAll(
          out, [](size_t) { return -1.0f; }, "reduce: a rank not the root");

    EXPECT_EQ(spcclAllGather(send.data(), recv.data(), count, spcclFloat32, comm, stream),
              spcclSuccess);
    sync();
    expectAll(
        recv.get(), [count](size_t i) { return valueOf(static_cast<int>(i / count), i % count); },
        "all-gather");

    // In place: this rank's block of recvbuff is its input.
    std::vector<float> blocks(count * n, -1.0f);
    for (size_t i = 0; i < count; ++i) blocks[rank * count + i] = valueOf(rank, i);
    recv.set(blocks);
    EXPECT_EQ(
        spcclAllGather(recv.data() + rank * count, recv.data(), count, spcclFloat32, comm, stream),
        spcclSuccess);
    sync();
    expectAll(
        recv.get(), [count](size_t i) { return valueOf(static_cast<int>(i / count), i % count); },
        "in-place all-gather");

    recv.set(std::vector<float>(count * n, -1.0f));
    EXPECT_EQ(
        spcclReduceScatter(send.data(), recv.data(), count, spcclFloat32, spcclSum, comm, stream),
        spcclSuccess);
    sync();
    out = recv.get();
    out.resize(count);
    expectAll(
        out, [&](size_t i) { return sum(rank * count + i); }, "reduce-scatter");

    if (stream != nullptr) emuCudaStreamDestroy(stream);
    return kChildOk;
  });
}

TEST(StagingPieces, CopiesGoPieceByPieceAndTheKnobTurnsItOff) {
  // 4 pieces and a bit: 5 copies in and 5 out; with the cut off, 1 each.
  const size_t count = 4 * 4096 + 3;
  for (size_t pieceBytes : {size_t{16384}, size_t{0}}) {
    const PieceBytes pieces(pieceBytes);
    runOnRanks(2, [pieceBytes](int rank, spcclComm_t comm) {
      void* stream = emuCudaStreamCreate();
      DeviceFloats send(count, stream, valuesOf(rank, count)), recv(count, stream);
      cuStreamSynchronize(stream);
      const EmuCudaCounters before = emuCudaCounters();
      EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, stream),
                spcclSuccess);
      cuStreamSynchronize(stream);
      const EmuCudaCounters after = emuCudaCounters();
      const uint64_t expected = pieceBytes == 0 ? 1 : 5;
      EXPECT_EQ(after.copiesFromDevice - before.copiesFromDevice, expected)
          << "SPCCL_STAGING_CHUNK_BYTES=" << pieceBytes;
      EXPECT_EQ(after.copiesToDevice - before.copiesToDevice, expected)
          << "SPCCL_STAGING_CHUNK_BYTES=" << pieceBytes;
      expectAll(
          recv.download(stream), [](size_t i) { return valueOf(0, i) + valueOf(1, i); },
          "all-reduce");
      emuCudaStreamDestroy(stream);
      return kChildOk;
    });
  }
}

TEST(StagingPieces, FirstPieceArrivesWhileTheLastIsStillCopiedIn) {
  // Rank 0 holds its last piece's copy in (the gate). Rank 1's first piece
  // can then only be done if rank 0 sent its first piece before its input
  // was all copied in, and rank 1 copied it out before the call ended:
  // the pipeline. Without it, rank 1 waits for the gate and never sees
  // the piece (each side gives up after 10 s, and the test fails).
  const PieceBytes pieces(16384);
  const size_t count = 4 * 4096;  // 4 pieces
  auto* sawFirstPiece =
      static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sawFirstPiece, MAP_FAILED);
  new (sawFirstPiece) std::atomic<int>(0);
  const auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
  runOnRanks(2, [&](int rank, spcclComm_t comm) {
    void* stream = emuCudaStreamCreate();
    DeviceFloats send(count, stream, valuesOf(rank, count)), recv(count, stream);
    cuStreamSynchronize(stream);
    const auto sum = [](size_t i) { return valueOf(0, i) + valueOf(1, i); };
    if (rank == 0) {
      emuCudaCloseCopyGate(3);  // pieces 0..2 pass, piece 3 waits
      EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, stream),
                spcclSuccess);
      const auto until = deadline();
      while (sawFirstPiece->load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(sawFirstPiece->load(), 1)
          << "rank 1 did not get the first piece while rank 0's last piece was held";
      emuCudaOpenCopyGate();
    } else {
      const uint64_t copiedOut = emuCudaCounters().copiesToDeviceDone;
      EXPECT_EQ(spcclAllReduce(send.data, recv.data, count, spcclFloat32, spcclSum, comm, stream),
                spcclSuccess);
      const auto until = deadline();
      while (emuCudaCounters().copiesToDeviceDone == copiedOut &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      // The counter was read under the emulation's lock after the copy:
      // the first piece's bytes are in place (nothing else writes them).
      std::vector<float> first(recv.data, recv.data + 4096);
      expectAll(first, sum, "the first piece, while rank 0's last piece is held");
      if (!::testing::Test::HasFailure()) sawFirstPiece->store(1);
    }
    expectAll(recv.download(stream), sum, "all-reduce");
    emuCudaStreamDestroy(stream);
    return kChildOk;
  });
  munmap(sawFirstPiece, sizeof(std::atomic<int>));
}

}  // namespace

// The compressed all-reduce of device buffers against the emulated driver
// (test_device_compressed*.cc): the inputs, one call on either path with
// the emulator's counters around it, and the bounds on what the device
// path copies.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emulated_ranks.h"
#include "kernels/zen_hash.h"
#include "spccl.h"

namespace spccl::testing::compressed {

inline constexpr size_t kCount = 10007;  // not a multiple of anything
inline constexpr size_t kBlock = 64;
// Small pieces (SPCCL_COMPRESS_PIECE_BYTES, set before the ranks start;
// its least, job_settings.cc): each chunk is cut into several (4 or 5 of
// 1024 elements), encoded and decoded one at a time.
inline constexpr const char* kPieceBytes = "4096";
inline constexpr size_t kPieceLength = 1024;  // a multiple of lcm(8, kBlock)
inline constexpr size_t kMaxPieces = 32;      // compress/chunk_pieces.h, per chunk

// The inputs' mixer: the library's (kernels/zen_hash.h).
using kernels::mix64;

// Rank `rank`'s input: values whose float sums depend on their order.
inline std::vector<float> inputOf(int rank, size_t count = kCount) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(mix64(i * 7 + rank) % 20001) / 64.0f - 156.3f;
  return v;
}

inline size_t typeBytes(spcclDataType_t type) { return type == spcclFloat32 ? 4 : 2; }

// The input's bytes in `type`: f32 as inputOf; f16 finite values of either
// sign with magnitudes 2^-5 .. 2^6 (exponent field 10..20); bf16 inputOf's
// floats with their low half dropped.
inline std::vector<unsigned char> inputBytesOf(int rank, spcclDataType_t type,
                                               size_t count = kCount) {
  const std::vector<float> values = inputOf(rank, count);
  std::vector<unsigned char> bytes(count * typeBytes(type));
  if (type == spcclFloat32) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  for (size_t i = 0; i < count; ++i) {
    uint16_t half = 0;
    if (type == spcclFloat16) {
      const uint64_t r = mix64(i * 13 + static_cast<uint64_t>(rank) * 7919);
      half = static_cast<uint16_t>((r & 0x8000u) | ((10 + (r >> 16) % 11) << 10) | (r & 0x3ffu));
    } else {
      uint32_t bits = 0;
      std::memcpy(&bits, &values[i], sizeof(bits));
      half = static_cast<uint16_t>(bits >> 16);
    }
    std::memcpy(&bytes[i * 2], &half, sizeof(half));
  }
  return bytes;
}

// `bytes` bytes of emulated device memory.
struct DeviceBytes {
  explicit DeviceBytes(size_t bytes) : bytes(bytes), data(emuCudaAlloc(bytes, EmuCudaDevice)) {}
  ~DeviceBytes() { emuCudaFree(data); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void upload(const void* from) {
    cuMemcpyHtoDAsync_v2(reinterpret_cast<uint64_t>(data), from, bytes, nullptr);
    cuStreamSynchronize(nullptr);
  }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> out(bytes);
    cuMemcpyDtoHAsync_v2(out.data(), reinterpret_cast<uint64_t>(data), bytes, nullptr);
    cuStreamSynchronize(nullptr);
    return out;
  }
  size_t bytes;
  void* data;
};

struct Case {
  spcclDataType_t type = spcclFloat32;
  int bits = 4;
  spcclCodec_t codec = spcclCodecPiecewise;
  spcclRedOp_t op = spcclSum;
  void* stream = nullptr;
  bool inPlace = false;
  bool nonBlocking = false;  // spcclIcompressedAllReduce, then spcclWait
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
  size_t count = kCount;

  std::string describe(int rank) const {
    return std::string(type == spcclFloat32   ? "f32 "
                       : type == spcclFloat16 ? "f16 "
                                              : "bf16 ") +
           std::to_string(bits) + "-bit " + (codec == spcclCodecLinear ? "linear" : "piecewise") +
           (op == spcclAvg ? " avg" : " sum") + (stream ? " on a stream" : " NULL stream") +
           (inPlace ? " in place" : "") + (nonBlocking ? " non-blocking" : "") +
           (schedule == spcclCompressRing ? " ring" : "") +
           (count != kCount ? " count " + std::to_string(count) : "") + " rank " +
           std::to_string(rank);
  }
};

struct Outcome {
  std::vector<unsigned char> out;
  uint64_t launches = 0, bytesFromDevice = 0, bytesToDevice = 0;
  uint64_t copiesToDevice = 0, copiesToDeviceFromPageable = 0, streamSyncs = 0;
  uint64_t pinnedBytesAllocated = 0;
};

// One call with SPCCL_DEVICE_CODECS as given; residual: nullptr or count
// f32 (device or host memory), which the call updates.
inline Outcome compressedCall(spcclComm_t comm, int rank, bool deviceCodecs, const Case& c,
                              float* residual = nullptr) {
  setenv("SPCCL_DEVICE_CODECS", deviceCodecs ? "1" : "0", 1);
  const size_t bytes = c.count * typeBytes(c.type);
  DeviceBytes send(bytes), recv(bytes);
  send.upload(inputBytesOf(rank, c.type, c.count).data());
  void* out = c.inPlace ? send.data : recv.data;
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.bits = c.bits;
  cfg.codec = c.codec;
  cfg.blockSize = kBlock;
  cfg.schedule = c.schedule;
  cfg.residual = residual;
  const EmuCudaCounters before = emuCudaCounters();
  spcclResult_t result = spcclSuccess;
  if (c.nonBlocking) {
    spcclRequest_t request = nullptr;
    result = spcclIcompressedAllReduce(send.data, out, c.count, c.type, c.op, &cfg, comm, &request);
    if (result == spcclSuccess) result = spcclWait(request);
  } else {
    result = spcclCompressedAllReduce(send.data, out, c.count, c.type, c.op, &cfg, comm, c.stream);
  }
  EXPECT_EQ(result, spcclSuccess) << c.describe(rank) << ": " << spcclGetLastError(comm);
  cuStreamSynchronize(c.stream);
  const EmuCudaCounters now = emuCudaCounters();
  Outcome o;
  o.launches = now.kernelLaunches - before.kernelLaunches;
  o.bytesFromDevice = now.bytesFromDevice - before.bytesFromDevice;
  o.bytesToDevice = now.bytesToDevice - before.bytesToDevice;
  o.copiesToDevice = now.copiesToDevice - before.copiesToDevice;
  o.copiesToDeviceFromPageable = now.copiesToDeviceFromPageable - before.copiesToDeviceFromPageable;
  o.streamSyncs = now.streamSyncs - before.streamSyncs;
  o.pinnedBytesAllocated = now.pinnedBytesAllocated - before.pinnedBytesAllocated;
  o.out = (c.inPlace ? send : recv).download();
  unsetenv("SPCCL_DEVICE_CODECS");
  return o;
}

inline bool sameBits(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  return a == b;
}

// One chunk's encoding at most: count/n + a block elements (whole
// blocks), as up to kMaxPieces standalone pieces (a set of scales and a
// partial byte of codes each, at most).
inline size_t chunkEncodingAtMost(int n, const Case& c) {
  const size_t chunk = c.count / static_cast<size_t>(n) + kBlock;
  return (chunk / kBlock + kMaxPieces) * sizeof(float) +
         (chunk * static_cast<size_t>(c.bits) + 7) / 8 + kMaxPieces;
}

// What the device path may copy each way at most, either schedule, with a
// residual or not (it never crosses): to the host every chunk's encoding
// once (the peers' chunks of the input and the owned sum), to the device
// 2(n - 1) chunks' (the two-shot: the peers' codes of the owned chunk,
// summed there, and the all-gathered chunks; the ring: the partial sums
// and the all-gather). Where the two-shot's owned chunk crosses fewer
// bytes in its type (compress/owned_sum_placement.h: no residual,
// (n - 1) x its codes > its bytes), it comes to the host instead of its
// sum's codes, and its sum's codes go to the device instead of the
// peers'; the bytes both ways are then within the cheaper of the two. The
// owned chunk crossing where its codes are cheaper, its f32 sum, or the
// owned sum's codes copied back break the bounds.
inline void expectOnlyCodesCopied(const Outcome& device, int n, const Case& c,
                                  const std::string& what) {
  const size_t widest = chunkEncodingAtMost(n, c), peers = static_cast<size_t>(n - 1);
  const size_t ownedInType = (c.count / static_cast<size_t>(n) + kBlock) * typeBytes(c.type);
  const size_t ownedSumAtMost = std::min(n * widest, ownedInType + widest);
  EXPECT_GT(device.bytesFromDevice, 0u) << what;
  EXPECT_LE(device.bytesFromDevice, peers * widest + std::max(widest, ownedInType))
      << what << ": more than n chunks' codes (or n - 1 and the owned chunk) copied in";
  if (n > 1) {
    EXPECT_GT(device.bytesToDevice, 0u) << what;
  }
  EXPECT_LE(device.bytesToDevice, 2 * peers * widest)
      << what << ": more than 2(n - 1) chunks' codes copied out";
  EXPECT_LE(device.bytesFromDevice + device.bytesToDevice, 2 * peers * widest + ownedSumAtMost)
      << what << ": the owned sum crossed more than its cheaper placement";
  // Each partial sum or peer's codes accumulated, the owned sum encoded
  // and decoded (or, summed on the host, every peer's chunk encoded and
  // decoded).
  EXPECT_GE(device.launches, static_cast<uint64_t>(n)) << what;
}

// The device path's output equals the staged path's bit for bit, and it
// copied only what expectOnlyCodesCopied allows.
inline void compareWithStaged(spcclComm_t comm, int rank, int n, const Case& c) {
  const std::string what = c.describe(rank);
  const Outcome staged = compressedCall(comm, rank, false, c);
  const Outcome device = compressedCall(comm, rank, true, c);
  EXPECT_EQ(staged.launches, 0u) << what << ": the staged path launched kernels";
  EXPECT_GE(staged.bytesFromDevice, c.count * typeBytes(c.type)) << what;
  EXPECT_GE(staged.bytesToDevice, c.count * typeBytes(c.type)) << what;
  EXPECT_TRUE(sameBits(device.out, staged.out)) << what << ": the outputs differ";
  expectOnlyCodesCopied(device, n, c, what);
}

class DeviceCompressed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("SPCCL_COMPRESS_PIECE_BYTES", kPieceBytes, 1); }
  static void TearDownTestSuite() { unsetenv("SPCCL_COMPRESS_PIECE_BYTES"); }
};

}  // namespace spccl::testing::compressed

// The two-shot compressed all-reduce of device buffers: what its owned sum
// (InputEncoder::sumOwned, compress/owned_sum_placement.h) takes of pinned
// memory, against the emulated driver (real ranks, host stand-ins of the
// kernels: not a GPU). Outputs bit for bit against the staged path.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device_compressed_calls.h"
#include "emulated_ranks.h"
#include "spccl.h"

using namespace spccl::testing;
using namespace spccl::testing::compressed;

namespace {

// The pinned pool's rounding (device/pinned_pool.cc): whole 64 KiB.
constexpr size_t kPinnedRounding = size_t{64} << 10;

// quantizedBytes of `length` elements: a scale a block, then the codes.
size_t codeBytes(size_t length, int bits) {
  return (length + kBlock - 1) / kBlock * sizeof(float) +
         (length * static_cast<size_t>(bits) + 7) / 8;
}

// 2^20 + 100 f32 on 4 ranks: 16386 blocks of 64, chunks of 4097, 4097,
// 4096 and 4096 blocks (the last 28 elements short), each cut into 32
// pieces of 8256 elements but a shorter last (chunk_pieces.h: at least a
// chunk / 32, in whole blocks). A fresh rank's first call on the device
// takes from the driver the encodings' staging (the whole tensor's codes)
// and the peers' codes of one owned piece: 3 x one piece's codes, not 3 x
// the first chunk's (442 476 bytes, which the bound excludes). Every
// call's pieces fit (the output is the staged path's).
TEST_F(DeviceCompressed, PeerCodesStagingSizedByTheLargestOwnedPieceN4) {
  runOnRanks(4, [](int rank, spcclComm_t comm) {
    Case c;
    c.count = (size_t{1} << 20) + 100;
    const std::string what = c.describe(rank);
    const Outcome device = compressedCall(comm, rank, true, c);
    const Outcome staged = compressedCall(comm, rank, false, c);
    EXPECT_TRUE(sameBits(device.out, staged.out)) << what << ": the outputs differ";
    expectOnlyCodesCopied(device, 4, c, what);
    const size_t pieceAtMost = c.count / 4 / kMaxPieces + 2 * kBlock;
    EXPECT_GT(device.pinnedBytesAllocated, 0u) << what;
    EXPECT_LE(device.pinnedBytesAllocated,
              codeBytes(c.count, c.bits) + 3 * codeBytes(pieceAtMost, c.bits) + 2 * kPinnedRounding)
        << what << ": the peers' codes' staging is larger than 3 pieces' codes";
    return kChildOk;
  });
}

}  // namespace

// The two-shot compressed all-reduce of device buffers: where its owned sum
// is formed (compress/owned_sum_placement.h: on the device,
// InputEncoder::sumOwned, or on the host from InputEncoder::copyOwned)
// and what it takes of pinned memory, against the emulated driver (real
// ranks, host stand-ins of the kernels: not a GPU). Outputs bit for bit
// against the staged path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

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

// Chunk `chunk`'s elements of count on n ranks (compress/chunk_layout.h:
// whole blocks, the first blocks % n chunks one block more, the last
// short). Its pieces' encodings add up to codeBytes of it (chunk_pieces.h).
size_t chunkLength(size_t count, int n, int chunk) {
  const size_t blocks = (count + kBlock - 1) / kBlock, ranks = static_cast<size_t>(n);
  auto firstBlock = [&](size_t c) { return c * (blocks / ranks) + std::min(c, blocks % ranks); };
  const auto c = static_cast<size_t>(chunk);
  return std::min(count, firstBlock(c + 1) * kBlock) - std::min(count, firstBlock(c) * kBlock);
}

struct Placement {
  spcclDataType_t type;
  int bits;
  bool residual;  // a device residual (error feedback)
  bool onHost;    // where the owned sum crosses fewer bytes
  // Only the ranks from this one on sum on the host (with onHost): ranks
  // whose chunks cross different bytes an element may choose differently.
  int hostFromRank = 0;
  size_t count = kCount;
};

// The owned sum where it crosses fewer bytes: on the device the n - 1
// peers' codes of the owned chunk (C each) go there and its sum's codes
// come back (n x C); on the host the owned chunk comes in its type (L x s)
// and its sum's codes go to the device (L x s + C), or, with a device
// residual, its f32 sum goes there (L x 4) to be encoded where the
// residual lies and those codes come back (L x (s + 4) + C). Each case's
// placement is written out (not computed by the library's rule): the
// emulator's bytes each way are exactly that placement's, its pinned
// copies to the device none on the host without a residual (the sum's
// codes go from the schedule's pageable buffer) and some otherwise (the
// peers' codes, or the f32 sum), and the output (and residual) the staged
// path's bits, sum and avg.
void ownedSumPlacement(int n, std::initializer_list<Placement> placements) {
  runOnRanks(n, [n, placements](int rank, spcclComm_t comm) {
    for (const Placement& p : placements)
      for (spcclRedOp_t op : {spcclSum, spcclAvg}) {
        Case c;
        c.type = p.type;
        c.bits = p.bits;
        c.op = op;
        c.count = p.count;
        const bool onHost = p.onHost && rank >= p.hostFromRank;
        const std::string what = c.describe(rank) + (p.residual ? " device residual" : "") +
                                 (onHost ? ": owned sum on the host" : ": owned sum on the device");
        DeviceBytes stagedResidual(c.count * sizeof(float)),
            deviceResidual(c.count * sizeof(float));
        const std::vector<float> start(c.count, 1.0f / 256);
        stagedResidual.upload(start.data());
        deviceResidual.upload(start.data());
        auto residualOf = [&p](DeviceBytes& r) {
          return p.residual ? static_cast<float*>(r.data) : nullptr;
        };
        const Outcome staged = compressedCall(comm, rank, false, c, residualOf(stagedResidual));
        const Outcome device = compressedCall(comm, rank, true, c, residualOf(deviceResidual));
        EXPECT_TRUE(sameBits(device.out, staged.out)) << what << ": the outputs differ";
        if (p.residual) {
          EXPECT_TRUE(sameBits(deviceResidual.download(), stagedResidual.download()))
              << what << ": the residuals differ";
        }
        size_t peersCodes = 0;
        for (int q = 0; q < n; ++q)
          if (q != rank) peersCodes += codeBytes(chunkLength(c.count, n, q), c.bits);
        const size_t owned = chunkLength(c.count, n, rank), ownedCodes = codeBytes(owned, c.bits);
        const size_t peers = static_cast<size_t>(n - 1);
        const size_t ownedInType = owned * typeBytes(c.type), ownedSum = owned * sizeof(float);
        size_t fromDevice = ownedCodes, toDevice = peers * ownedCodes;
        if (onHost) {
          fromDevice = ownedInType + (p.residual ? ownedCodes : 0);
          toDevice = p.residual ? ownedSum : ownedCodes;
        }
        EXPECT_EQ(device.bytesFromDevice, peersCodes + fromDevice) << what;
        EXPECT_EQ(device.bytesToDevice, peersCodes + toDevice) << what;
        const uint64_t pinnedCopiesIn = device.copiesToDevice - device.copiesToDeviceFromPageable;
        if (onHost && !p.residual) {
          EXPECT_EQ(pinnedCopiesIn, 0u) << what << ": peers' codes went to the device";
        } else {
          EXPECT_GE(pinnedCopiesIn, 1u) << what << ": no peers' codes went to the device";
        }
      }
    return kChildOk;
  });
}

// 3 ranks, chunks of 3392, 3328 and 3287 elements, one piece each (f16,
// bf16): 8-bit codes are 1.06 bytes an element, 2 peers' 2.1 > 2 bytes of
// the element: the host; 4 and 5 bits (1.1 and 1.4 bytes for 2 peers):
// the device; with a device residual 2.1 < 2 + 4: the device.
TEST_F(DeviceCompressed, OwnedSumPlacementFollowsTheBytesHalfTypesN3) {
  ownedSumPlacement(3, {{spcclFloat16, 8, false, true},
                        {spcclFloat16, 4, false, false},
                        {spcclBfloat16, 8, false, true},
                        {spcclBfloat16, 5, false, false},
                        {spcclFloat16, 8, true, false}});
}

// 5 ranks, f32 chunks of about 2000 elements in 2 pieces: 8-bit codes for
// 4 peers are 4.25 bytes an element > 4: the host (a copy a piece); 7-bit
// 3.75: the device.
TEST_F(DeviceCompressed, OwnedSumPlacementFollowsTheBytesF32N5) {
  ownedSumPlacement(5, {{spcclFloat32, 8, false, true}, {spcclFloat32, 7, false, false}});
}

// 7 ranks with a device residual (f16, one piece a chunk): 8-bit codes
// for 6 peers are 6.4 bytes an element > 2 + 4: the host sums, the device
// encodes the sum with the residual; 4-bit 3.4: the device.
TEST_F(DeviceCompressed, OwnedSumPlacementWithAResidualN7) {
  ownedSumPlacement(7, {{spcclFloat16, 8, true, true}, {spcclFloat16, 4, true, false}});
}

// 9 ranks with a device residual, f32 chunks of about 1100 elements in 2
// pieces: 8-bit codes for 8 peers are 8.5 bytes an element > 4 + 4: the
// host (its one-pass f32 sum on the staged path, the accumulator's here:
// the same bits); 4-bit 4.5: the device.
TEST_F(DeviceCompressed, OwnedSumPlacementWithAResidualF32N9) {
  ownedSumPlacement(9, {{spcclFloat32, 8, true, true}, {spcclFloat32, 4, true, false}});
}

// Ranks that choose differently in one call (review): 129 f16 elements
// on 3 ranks are chunks of 64, 64 and 1 element (whole blocks, the last
// short). At 7 bits a full chunk's codes are 4 + 56 bytes, 2 peers' 120 <=
// its 128 bytes: the device; the 1-element chunk's are 4 + 1, 2 peers'
// 10 > 2: the host. Nothing on the wire depends on the placement: the
// same bits on every rank as the staged path.
TEST_F(DeviceCompressed, OwnedSumPlacementDiffersBetweenRanksN3) {
  Placement mixed{spcclFloat16, 7, false, true};
  mixed.hostFromRank = 2;
  mixed.count = 129;
  ownedSumPlacement(3, {mixed});
}

}  // namespace

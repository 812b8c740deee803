// A large dense call cut into pieces of SPCCL_STAGING_CHUNK_BYTES, run one
// after the other within the one call (one sequence number, one
// signature), so that the copies of device buffers to and from pinned
// memory overlap the transfers of other pieces (core/staged_call.h,
// runInPieces).
//
// Every rank cuts the same way whatever its memory: the cut depends only
// on the call's arguments and the agreed knob (core/job_settings.h), so a
// rank with host buffers and one with device buffers exchange the same
// messages. Element-wise collectives (all-reduce, broadcast, reduce) cut
// their vectors into ranges; all-gather and reduce-scatter cut each rank's
// block the same way, and gather a piece's blocks through scratch memory
// (kScratchPieceBlocks) because a schedule takes contiguous buffers.
// Results are those of the collective on each piece: the same values, but
// a float reduction may round differently from the uncut call, as each
// piece picks its own schedule for its size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "device/staging.h"

namespace spccl {

// 1 when the call is not cut: pieceBytes 0 (off), a collective other than
// the five above, or a block of at most pieceBytes.
size_t densePieceCount(const CollArgs& args, size_t pieceBytes);

// What piece `piece` of a call cut into densePieceCount pieces reads and
// writes on rank `rank`, relative to the arguments' pointers (for
// StagingSet::copyRangeIn / copyRangeOut).
struct PieceRanges {
  std::vector<device::StagedRange> reads;
  std::vector<device::StagedRange> writes;
};
PieceRanges densePieceRanges(const CollArgs& args, int rank, int nranks, size_t pieceBytes,
                             size_t piece);

// Runs piece `piece` of `args` (buffers the CPU reaches) on ctx.
spcclResult_t runDensePiece(CollContext& ctx, const CollArgs& args, size_t pieceBytes, size_t piece,
                            const std::string& algorithmOverride);

}  // namespace spccl

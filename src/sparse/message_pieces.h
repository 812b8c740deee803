// How the pipelined sparse schedules (hc, bp) cut a stage's message: into
// pieces that each carry one contiguous range of positions, so that a rank
// merges piece k while piece k+1 is still on the wire, and sends piece k of
// its next stage while it receives piece k+1 of this one (issue 18:
// "cut each schedule into chunks so that encoding or merging chunk k
// overlaps the transfer of chunk k-1"). Every rank must cut alike, so the
// count comes from agreed figures only (the universe, the agreed non-zero
// counts, SPCCL_SPARSE_PIECE_BYTES, which communicator creation checks).
#pragma once

#include <algorithm>
#include <cstdint>

namespace spccl::sparse {

// More pieces than this cost more in per-message latency and bookkeeping
// than they overlap.
constexpr int kMaxMessagePieces = 16;

// The number of pieces for a message of about estimatedBytes, cut into
// pieces of about pieceBytes (0: one piece), at most kMaxMessagePieces
// and never more than the universe's positions.
inline int messagePieces(uint64_t estimatedBytes, uint64_t pieceBytes, uint64_t universe) {
  if (pieceBytes == 0 || estimatedBytes <= pieceBytes) return 1;
  const uint64_t pieces = (estimatedBytes + pieceBytes - 1) / pieceBytes;
  const uint64_t capped = std::min<uint64_t>(pieces, kMaxMessagePieces);
  return static_cast<int>(std::max<uint64_t>(1, std::min(capped, universe)));
}

}  // namespace spccl::sparse

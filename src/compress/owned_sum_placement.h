// What the two-shot compressed all-reduce of device buffers needs for a
// rank's owned sum (docs/gpu.md, "Compressed all-reduce of device
// buffers"), from the agreed layout and the communicator's piece size.
#pragma once

#include <cstddef>

#include "compress/chunk_layout.h"
#include "compress/chunk_pieces.h"
#include "compress/compressed_allreduce.h"

namespace spccl::compress {

// The pinned host bytes rank `me`'s owned sum on the device needs for one
// piece: the n - 1 peers' codes of its largest piece (its first:
// chunk_pieces.h), which every piece's fit. pieceBytes: the
// communicator's SPCCL_COMPRESS_PIECE_BYTES, as the schedule cuts.
inline size_t ownedSumStagingBytes(const CompressedCall& call, const ChunkLayout& layout, int me,
                                   size_t pieceBytes) {
  const size_t largest = piecesOf(call, layout, me, pieceBytes).size(0);
  return static_cast<size_t>(layout.nranks - 1) * kernels::quantizedBytes(call.spec, largest);
}

}  // namespace spccl::compress

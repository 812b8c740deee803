// How the two-shot schedule cuts a chunk into pieces, so that the owner
// can send each piece of its sum as soon as that piece is summed instead
// of the link idling through the whole owned sum (issue 18). A piece is
// encoded standalone (its own block scales, then its codes), and a
// chunk's encoding is its pieces' encodings back to back: pieces hold
// whole blocks and a multiple of 8 elements (all but the last), so that
// is exactly quantizedBytes(chunk) bytes and the same scales and codes,
// and the decoding the same bits, as the chunk encoded whole. Every rank
// cuts alike: the cut depends only on the agreed layout and type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "compress/chunk_layout.h"
#include "compress/compressed_allreduce.h"

namespace spccl::compress {

// Pieces a chunk at most, whatever the piece size: a huge chunk does not
// post thousands of receives (the default 1 MiB of f32 input a piece makes
// 8 pieces of an owned chunk at 64 MiB, n = 8).
constexpr size_t kMaxPieces = 32;

struct ChunkPieces {
  size_t begin = 0;        // the chunk's first element in the tensor
  size_t length = 0;       // the chunk's element count
  size_t pieceLength = 1;  // elements of every piece but the last

  size_t count() const { return std::max<size_t>(1, (length + pieceLength - 1) / pieceLength); }
  size_t first(size_t piece) const { return begin + std::min(length, piece * pieceLength); }
  size_t size(size_t piece) const {
    return std::min(length, (piece + 1) * pieceLength) - std::min(length, piece * pieceLength);
  }
  // Where the piece's encoding starts in the chunk's, and its bytes.
  size_t encodedOffset(const kernels::QuantizerSpec& spec, size_t piece) const {
    return piece * kernels::quantizedBytes(spec, pieceLength);
  }
  size_t encodedBytes(const kernels::QuantizerSpec& spec, size_t piece) const {
    return kernels::quantizedBytes(spec, size(piece));
  }
};

// pieceBytes: of f32 input (SPCCL_COMPRESS_PIECE_BYTES); 0: one piece.
// f32 calls only: the owned sum of other types goes through a whole-chunk
// accumulator (two_shot.cc), so their chunks stay one piece.
inline ChunkPieces piecesOf(const CompressedCall& call, const ChunkLayout& layout, int chunk,
                            size_t pieceBytes) {
  ChunkPieces pieces{layout.begin(chunk), layout.length(chunk), layout.length(chunk)};
  if (call.type != spcclFloat32 || pieceBytes == 0 || pieces.length == 0) {
    pieces.pieceLength = std::max<size_t>(1, pieces.length);
    return pieces;
  }
  // Whole blocks, and whole bytes of packed codes at any bit width.
  const size_t unit = std::lcm(size_t{8}, call.spec.blockSize);
  const size_t wanted =
      std::max(pieceBytes / sizeof(float), (pieces.length + kMaxPieces - 1) / kMaxPieces);
  pieces.pieceLength = (wanted + unit - 1) / unit * unit;
  return pieces;
}

}  // namespace spccl::compress

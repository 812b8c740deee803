// Where the two-shot compressed all-reduce of device buffers forms a
// rank's owned sum (docs/gpu.md, "Compressed all-reduce of device
// buffers"), chosen per call by the bytes that cross between host and
// device for the owned chunk (L elements of s bytes, C bytes of codes):
// - on the device (DeviceCodecs::sumOwned): the n - 1 peers' codes of it
//   go to the device and its sum's codes come back: n x C;
// - on the host (the CPU's owned sum, as for host memory): the owned
//   chunk comes to the host in its type (copyOwned) and its sum's codes
//   go to the device, where the output is decoded: L x s + C; with a
//   residual in device memory the f32 sum goes instead, to be encoded
//   where the residual lies, and its codes come back (encodeOwnedSum):
//   L x (s + 4) + C.
// So the device iff (n - 1) x C <= L x s, or L x (s + 4) with a residual
// (ties too: the host's pass over the chunk is work the device saves it).
// Either way the same bits (both sum in rank order; the encodes and
// decodes are the CPU's bit for bit). Each rank chooses alone, from the
// agreed layout.
#pragma once

#include <algorithm>
#include <cstddef>

#include "compress/chunk_layout.h"
#include "compress/chunk_pieces.h"
#include "compress/compressed_allreduce.h"

namespace spccl::compress {

// What the host's owned sum moves an element besides its codes: the
// element in its type, and its f32 sum where the residual lies on the
// device.
inline size_t hostBytesAnElement(const CompressedCall& call) {
  return spcclTypeSize(call.type) + (call.residual != nullptr ? sizeof(float) : 0);
}

// Whether rank `me`'s owned sum of `call` (device buffers, the two-shot)
// is formed on the device.
inline bool ownedSumOnDevice(const CompressedCall& call, const ChunkLayout& layout, int me) {
  const size_t peers = static_cast<size_t>(layout.nranks - 1);
  return peers * layout.encodedBytes(call.spec, me) <= layout.length(me) * hostBytesAnElement(call);
}

// The pinned host bytes rank `me`'s owned sum needs for one piece, the
// largest (its first: chunk_pieces.h), which every piece's fit: on the
// device the n - 1 peers' codes of it, on the host the piece in its type
// (and, with a residual, then its f32 sum). pieceBytes: the
// communicator's SPCCL_COMPRESS_PIECE_BYTES, as the schedule cuts.
inline size_t ownedSumStagingBytes(const CompressedCall& call, const ChunkLayout& layout, int me,
                                   size_t pieceBytes) {
  const size_t largest = piecesOf(call, layout, me, pieceBytes).size(0);
  if (!ownedSumOnDevice(call, layout, me))
    return largest *
           std::max(spcclTypeSize(call.type), call.residual != nullptr ? sizeof(float) : 0);
  return static_cast<size_t>(layout.nranks - 1) * kernels::quantizedBytes(call.spec, largest);
}

}  // namespace spccl::compress

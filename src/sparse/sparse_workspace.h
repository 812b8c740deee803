// Buffers a communicator's sparse all-reduce keeps from call to call, so
// that a training loop's steady state neither allocates nor page-faults
// for them: a fresh 2 MB vector per call costs 512 page faults, which on a
// busy host is as much as the scan that fills it. Only the communicator's
// engine thread (the one running the call) touches them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sparse/bucketing.h"
#include "sparse/message_buffer.h"
#include "sparse/sparse_set.h"

namespace spccl::sparse {

class DeviceRankTiles;  // (device_rank_tiles.h)

// One piece's buffers in Hierarchical Centralization (message_pieces.h):
// its merged and received sets, its stage message and receive buffer, its
// dense tensor (when the caller's output is COO) and the message encoded
// from it, and its share of the input's positions, made relative to the
// piece's first position.
struct MergePieceBuffers {
  SparseSet current;
  SparseSet merged;
  SparseSet received;
  std::vector<unsigned char> encoded;
  MessageBuffer receive;
  std::vector<unsigned char> denseTensor;
  std::vector<unsigned char> denseMessage;
  std::vector<uint64_t> inputPositions;
  SparseSet result;
};

struct SparseWorkspace {
  // The dense input's non-zeros. Sized to the largest input seen (so a
  // one-pass extraction fits); the call's own count is kept in SparseCall.
  std::vector<uint64_t> inputIndices;
  std::vector<unsigned char> inputValues;
  // Hierarchical Centralization's pieces, reused stage after stage and
  // call after call.
  std::vector<MergePieceBuffers> mergePieces;
  // Sets, messages and a tensor of the other schedules (named for what
  // HC once used them for).
  SparseSet currentSet;
  SparseSet mergedSet;
  SparseSet receivedSet;
  std::vector<unsigned char> encodedSet;
  std::vector<unsigned char> denseTensor;
  std::vector<unsigned char> denseMessage;
  // The result of a call whose caller takes it as pairs
  // (SparseCall::resultOut) where it comes dense (sparse_allreduce.h).
  std::vector<unsigned char> denseResult;
  // Balanced Parallelism: the push's buckets, one message, receive buffer
  // and decoded set per peer (by rank), and the owner's dense accumulator
  // of its partition. (Its own part and aggregate use currentSet and
  // mergedSet, its pull message encodedSet.)
  Buckets buckets;
  std::vector<std::vector<unsigned char>> peerMessages;
  std::vector<MessageBuffer> peerReceives;
  std::vector<SparseSet> peerSets;
  std::vector<unsigned char> ownerAccumulator;
  // Its pipelined form (bp_pipeline.cc): every piece's receive buffer
  // (push and pull), pull message and pulled set (by piece, then rank),
  // and the arrays the buckets are split into (bp_piece_split.h).
  std::vector<MessageBuffer> pieceReceives;
  std::vector<std::vector<unsigned char>> pullPieces;
  std::vector<SparseSet> pulledPieces;
  std::vector<uint64_t> splitPositions;
  std::vector<unsigned char> splitValues;
  // The dense fallback (ordered_dense_allreduce.h): every peer's slice of
  // this rank's range, and the owner's blocks while it sums them.
  std::vector<MessageBuffer> sliceReceives;
  std::vector<unsigned char> sliceScratch;
  // A sparse all-reduce of device buffers (core/device_sparse_call.h): its
  // input's 32-bit indices widened to the uint64 the COO form takes, sized
  // to the most non-zeros seen.
  std::vector<uint64_t> deviceInputIndices;
  // Its Balanced Parallelism calls' ZenHash rank tiles, on the device
  // (device_rank_tiles.h); nullptr until the first such call.
  std::shared_ptr<DeviceRankTiles> deviceRankTiles;
};

}  // namespace spccl::sparse

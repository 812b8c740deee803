// One piece of Hierarchical Centralization's merged set: the pairs whose
// positions lie in one range of the index space (message_pieces.h), kept as
// pairs or, past the break-even of dense_stage.h, as a dense tensor. A
// stage's exchange is split in two so that pieces pipeline: post() encodes
// the piece and posts its send and receive; complete() waits for the
// receive and merges it. Between the two a rank works on other pieces, so
// merging piece k overlaps the transfer of piece k+1.
//
// Positions inside a piece are relative to its first position: the piece is
// an HC set over a universe of its own, and every encoding, merge and dense
// stage works on it unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/sparse_kernels.h"
#include "runtime/coll_context.h"
#include "sparse/dense_stage.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_set.h"
#include "sparse/sparse_workspace.h"
#include "spccl.h"

namespace spccl::sparse {

// One exchange of a rank's schedule: send the set to sendPeer (if >= 0),
// receive at most maxNnz pairs from recvPeer (if >= 0) and merge them
// (`how`: which operand holds the lower ranks' data). last: no exchange
// follows, so the merge may write the caller's dense output directly.
struct HcStep {
  int sendPeer = -1;
  int recvPeer = -1;
  uint64_t maxNnz = 0;
  DenseMerge how = DenseMerge::AddHigher;
  bool last = false;
  int stage = -1;  // recursive-doubling stage (report), -1 for the folds
};

class HcPiece {
 public:
  // in: the piece's own input (relative positions, its universe, its slice
  // of the dense output); buffers: kept from call to call.
  HcPiece(CollContext& ctx, const SparseInput& in, const SparseRunOptions& options,
          SparseRunReport* report, MergePieceBuffers* buffers);
  HcPiece(const HcPiece&) = delete;
  HcPiece& operator=(const HcPiece&) = delete;
  HcPiece(HcPiece&&) = default;

  // Encodes and sends the set (step.sendPeer), posts the receive
  // (step.recvPeer). Waits first for this piece's previous send, whose
  // buffer the encoding reuses.
  spcclResult_t post(const HcStep& step);
  // Waits for the receive that post() posted and merges it.
  spcclResult_t complete(const HcStep& step);
  // Waits for the last send.
  spcclResult_t drain();

  // The pairs this piece sent in its last post().
  uint64_t sentPairs() const { return sentPairs_; }

  // The piece's result: in the caller's dense output (result->inDenseOutput,
  // with its non-zeros when known), else as pairs (relative positions).
  void finish(SparseSet* result);

 private:
  // The set as pairs: the piece's input until the first merge, so the first
  // stage sends it without a copy.
  kernels::SortedPairs mine() const;
  // The pairs become a dense tensor: the caller's dense output if it has
  // one, else the piece's own. (Place: the message overwrites all of it.)
  void becomeDense(DenseMerge how);

  CollContext* ctx_;
  SparseInput in_;
  const SparseRunOptions* options_;
  SparseRunReport* report_;
  size_t valueBytes_;
  MergePieceBuffers* b_;
  SparseSet* current_;  // the merged set, once ownInput_ is false
  SparseSet* next_;     // the merge's output, swapped in
  PeerRequest sendRequest_;
  PeerRequest recvRequest_;
  bool ownInput_ = true;  // current_ unused yet: the set is the input
  bool dense_ = false;
  bool inOutput_ = false;  // the last merge wrote the caller's dense output
  size_t outputNnz_ = 0;   // its non-zeros
  void* tensor_ = nullptr;
  size_t denseNnz_ = 0;  // as of the tensor's last encoding
  uint64_t sentPairs_ = 0;
};

}  // namespace spccl::sparse

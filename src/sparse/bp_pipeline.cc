// Balanced Parallelism (balanced_parallelism.cc) with each message cut into
// pieces over contiguous ranges of the owner's positions (bp_piece_split.h),
// so that its CPU work runs beside its transfers instead of between them
// (issue 18): the push's piece k+1 is sorted and encoded while piece k is
// on the wire; each owner sums piece k of its part, still in rank order
// (the bits stay those of the one-message schedule), while piece k+1
// arrives, and sends piece k of its pull as soon as it is summed; every
// rank decodes pull piece k while piece k+1 arrives. All receives are
// posted first, per peer in the order that peer sends (push pieces, then
// pull pieces), since messages between two ranks match in posting order.
#include <algorithm>
#include <span>
#include <vector>

#include "base/check.h"
#include "sparse/bp_context.h"
#include "sparse/bp_piece_split.h"
#include "sparse/even_ranges.h"
#include "sparse/message_pieces.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse::bp {

int pipelinePieces(const Context& c) {
  const int n = c.ctx.nranks();
  if (n < 2 || c.options.pieceBytes == 0) return 1;
  uint64_t smallestPart = c.partition.partSize(0);
  for (int p = 1; p < n; ++p) smallestPart = std::min(smallestPart, c.partition.partSize(p));
  // An owner's pull message, the larger stage: about its share of all the
  // non-zeros over its part. (No piece is without positions.)
  const uint64_t estimate = messageCapacity(totalNnz(c) / static_cast<unsigned>(n),
                                            c.in.universe / static_cast<unsigned>(n), c.valueBytes,
                                            c.options.allowedEncodings);
  return messagePieces(estimate, c.options.pieceBytes, smallestPart);
}

namespace {

enum Stage { kPush = 0, kPull = 1 };

class PipelinedCall {
 public:
  PipelinedCall(const Context& c, int pieces)
      : c_(c), n_(c.ctx.nranks()), r_(c.ctx.rank()), pieces_(pieces), peers_(peersInTurn(r_, n_)) {
    ranges_.reserve(static_cast<size_t>(n_));
    for (int p = 0; p < n_; ++p) ranges_.emplace_back(c.partition.partSize(p), pieces);
  }

  spcclResult_t run(SparseSet* result) {
    SPCCL_CHECK(postReceives());
    SPCCL_CHECK(push());
    std::vector<uint64_t> aggregateSizes(static_cast<size_t>(n_), 0);
    std::vector<SparseSet>& pulled = c_.workspace.pulledPieces;
    pulled.resize(static_cast<size_t>(pieces_) * static_cast<size_t>(n_));
    for (int k = 0; k < pieces_; ++k) {
      SPCCL_CHECK(sumAndPull(k, &pulled[pieceSlot(k, r_)]));
      aggregateSizes[r_] += pulled[pieceSlot(k, r_)].size();
      // One piece behind: decoding pull piece k - 1 runs while the owners'
      // piece k is on its way, without waiting on an owner still summing k.
      if (k > 0) SPCCL_CHECK(receivePull(k - 1, &aggregateSizes));
    }
    SPCCL_CHECK(receivePull(pieces_ - 1, &aggregateSizes));
    SPCCL_CHECK(c_.ctx.waitAll(sends_));
    if (c_.report) c_.report->pullImbalance = imbalanceRatio(aggregateSizes);
    std::vector<const SparseSet*> ascending;
    std::vector<const SparseSet*> unordered;
    for (int k = 0; k < pieces_; ++k)
      for (int q = 0; q < n_; ++q) {
        SparseSet& part = pulled[pieceSlot(k, q)];
        if (q == r_ || (flags_[slot(kPull, k, q)] & kGlobalIndices) != 0)
          ascending.push_back(&part);
        else
          unordered.push_back(&part);
      }
    return writePulledParts(c_, ascending, unordered, result);
  }

 private:
  size_t pieceSlot(int k, int q) const {
    return static_cast<size_t>(k) * static_cast<size_t>(n_) + static_cast<size_t>(q);
  }
  size_t slot(Stage stage, int k, int q) const {
    return (static_cast<size_t>(stage) * static_cast<size_t>(pieces_) + static_cast<size_t>(k)) *
               static_cast<size_t>(n_) +
           static_cast<size_t>(q);
  }

  spcclResult_t postReceives() {
    std::vector<MessageBuffer>& buffers = c_.workspace.pieceReceives;
    buffers.resize(2 * static_cast<size_t>(pieces_) * static_cast<size_t>(n_));
    receives_.assign(buffers.size(), PeerRequest{});
    flags_.assign(buffers.size(), 0);
    const uint64_t total = totalNnz(c_);
    const unsigned allowed = c_.options.allowedEncodings;
    for (Stage stage : {kPush, kPull})
      for (int k = 0; k < pieces_; ++k)
        for (int q : peers_) {
          // A push piece holds at most the sender's pairs over this rank's
          // piece; a pull piece at most all pairs over the owner's.
          const size_t capacity =
              stage == kPush
                  ? messageCapacity(c_.rankNnz[q], ranges_[r_].size(k), c_.valueBytes, allowed)
                  : messageCapacity(total, ranges_[q].size(k), c_.valueBytes, allowed);
          const size_t i = slot(stage, k, q);
          buffers[i].allocate(capacity);
          SPCCL_CHECK(c_.ctx.irecv(q, buffers[i].data(), capacity, &receives_[i]));
        }
    return spcclSuccess;
  }

  spcclResult_t send(int peer, const std::vector<unsigned char>& message, uint8_t flags) {
    sends_.emplace_back();
    SPCCL_CHECK(c_.ctx.isend(peer, message.data(), message.size(), &sends_.back(), flags));
    if (c_.report) c_.report->bytesSent += message.size();
    return spcclSuccess;
  }

  spcclResult_t receive(Stage stage, int k, int q, const MessageBuffer** data) {
    const size_t i = slot(stage, k, q);
    size_t bytes = 0;
    SPCCL_CHECK(c_.ctx.wait(&receives_[i], &bytes, &flags_[i]));
    c_.workspace.pieceReceives[i].setSize(bytes);
    if (c_.report) c_.report->bytesReceived += bytes;
    *data = &c_.workspace.pieceReceives[i];
    return spcclSuccess;
  }

  void sortPiece(int p, int k) {
    if (bucketsSorted_) return;  // (splitPieces keeps each bucket's order)
    Buckets& b = c_.workspace.buckets;
    const size_t at = cuts_.begin(p, k);
    sortByPosition(b.positions.data() + at, b.values.data() + at * c_.valueBytes, cuts_.count(p, k),
                   c_.valueBytes);
  }

  // Buckets by owner, cuts each bucket into its owner's pieces, and sends
  // every peer's pieces, piece by piece.
  spcclResult_t push() {
    Buckets& b = c_.workspace.buckets;
    SPCCL_CHECK(bucketOwnPairs(c_, &b, &bucketsSorted_));
    if (c_.report) {
      std::vector<uint64_t> bucketSizes(static_cast<size_t>(n_));
      for (int p = 0; p < n_; ++p) bucketSizes[p] = b.offsets[p + 1] - b.offsets[p];
      c_.report->pushImbalance = imbalanceRatio(bucketSizes);
    }
    cuts_.pieces = pieces_;
    splitPieces(ranges_, c_.valueBytes, &b, &c_.workspace.splitPositions, &c_.workspace.splitValues,
                &cuts_);
    std::vector<std::vector<unsigned char>>& encoded = c_.workspace.peerMessages;
    encoded.resize(static_cast<size_t>(pieces_) * static_cast<size_t>(n_));
    sends_.reserve(2 * static_cast<size_t>(pieces_) * static_cast<size_t>(n_));
    for (int k = 0; k < pieces_; ++k)
      for (int p : peers_) {
        sortPiece(p, k);
        const size_t at = cuts_.begin(p, k);
        std::vector<unsigned char>& message = encoded[pieceSlot(k, p)];
        message.clear();  // (its capacity stays)
        const Encoding e = encodeSet(b.positions.data() + at, b.values.data() + at * c_.valueBytes,
                                     cuts_.count(p, k), ranges_[p].size(k), c_.valueBytes,
                                     c_.options.allowedEncodings, &message);
        SPCCL_CHECK(send(p, message, static_cast<uint8_t>(e)));
      }
    return spcclSuccess;
  }

  // The owner's piece k: every sender's piece summed in rank order, then
  // sent to every peer; *global gets it over global indices.
  spcclResult_t sumAndPull(int k, SparseSet* global) {
    std::vector<SparseSet>& parts = c_.workspace.peerSets;
    parts.resize(static_cast<size_t>(n_));
    const uint64_t positions = ranges_[r_].size(k);
    for (int q : peers_) {
      const MessageBuffer* data = nullptr;
      SPCCL_CHECK(receive(kPush, k, q, &data));
      SPCCL_CHECK(decodeSet(data->data(), data->size(), flags_[slot(kPush, k, q)], positions,
                            c_.valueBytes, c_.options.allowedEncodings, q, &parts[q]));
    }
    sortPiece(r_, k);
    const Buckets& b = c_.workspace.buckets;
    const size_t at = cuts_.begin(r_, k), count = cuts_.count(r_, k);
    SparseSet& own = c_.workspace.currentSet;
    own.positions.assign(b.positions.data() + at, b.positions.data() + at + count);
    own.values.assign(b.values.data() + at * c_.valueBytes,
                      b.values.data() + (at + count) * c_.valueBytes);
    SparseSet& sum = c_.workspace.mergedSet;
    aggregate(c_, own, parts, positions, &sum);
    std::vector<std::vector<unsigned char>>& messages = c_.workspace.pullPieces;
    messages.resize(static_cast<size_t>(pieces_));
    const uint8_t flags =
        encodePullMessage(c_, sum, ranges_[r_].start(k), positions, global, &messages[k]);
    for (int q : peers_) SPCCL_CHECK(send(q, messages[k], flags));
    return spcclSuccess;
  }

  spcclResult_t receivePull(int k, std::vector<uint64_t>* aggregateSizes) {
    for (int q : peers_) {
      const MessageBuffer* data = nullptr;
      SPCCL_CHECK(receive(kPull, k, q, &data));
      SparseSet& part = c_.workspace.pulledPieces[pieceSlot(k, q)];
      SPCCL_CHECK(decodePullMessage(c_, data->data(), data->size(), flags_[slot(kPull, k, q)], q,
                                    ranges_[q].start(k), ranges_[q].size(k), &part));
      (*aggregateSizes)[q] += part.size();
    }
    return spcclSuccess;
  }

  const Context& c_;
  const int n_, r_, pieces_;
  const std::vector<int> peers_;
  std::vector<EvenRanges> ranges_;  // each owner's pieces
  PieceCuts cuts_;
  bool bucketsSorted_ = false;  // bucketOwnPairs gave every bucket ascending
  std::vector<PeerRequest> receives_, sends_;
  std::vector<uint8_t> flags_;  // each receive's frame flags
};

}  // namespace

spcclResult_t runPipelined(const Context& c, int pieces, SparseSet* result) {
  PipelinedCall call(c, pieces);
  return call.run(result);
}

}  // namespace spccl::sparse::bp

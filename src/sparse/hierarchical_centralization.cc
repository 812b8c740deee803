// Hierarchical Centralization (Zen Def. 7): recursive doubling with
// incremental aggregation, SparCML's SSAR. In stage k a rank exchanges its
// merged set (2^k ranks' worth) with rank ^ 2^k and merges, so an index
// common to all ranks crosses log2 n links instead of n-1 (Zen Lemma 2).
// Per-rank traffic Eq. (2): sum_i gamma(2^(i-1)) 2 M d / b with COO; here
// each stage's message takes the cheapest encoding of its own count, which
// switches a stage to Dense once the merged set passes the break-even.
// Non-power-of-two n: ranks p..n-1 (p = the largest power of two <= n)
// first fold into rank r-p and get the result back at the end.
//
// Determinism: a merge sums lower-rank data first (a + b with a from the
// lower ranks), so both partners compute the same bits, and every rank ends
// with the same set.
#include <cstring>
#include <utility>
#include <vector>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/dense_stage.h"
#include "sparse/ordered_dense_allreduce.h"
#include "sparse/received_merge.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

namespace {

int largestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Non-zeros held by the group of rank q after stage `stage` (the 2^stage
// ranks sharing q's high bits, with their folded partners): a bound on
// what q can send.
uint64_t groupNnz(const uint64_t* rankNnz, int n, int p, int q, int stage) {
  uint64_t total = 0;
  for (int member = 0; member < p; ++member) {
    if ((member >> stage) != (q >> stage)) continue;
    total += rankNnz[member];
    if (member + p < n) total += rankNnz[member + p];
  }
  return total;
}

// Whether HC's messages would outweigh the dense fallback's (ordered_
// dense_allreduce.h) 2 (n-1)/n of the tensor. Stage k sends the set of
// 2^k ranks (with their folded partners); without the overlap, which is
// unknown before the exchange, that is total 2^k / p pairs, capped at the
// universe: an upper bound, so HC keeps the stages where overlap would
// make it cheaper. From agreed counts: every rank decides alike, and the
// fallback adds in HC's tree order, so the bits are HC's either way.
bool preferDense(const SparseInput& in, const SparseRunOptions& options, uint64_t total, int n,
                 int p) {
  const size_t valueBytes = spcclTypeSize(in.type);
  uint64_t hcBytes = 0;
  for (int group = 1; group < p; group *= 2) {
    const unsigned __int128 pairs = static_cast<unsigned __int128>(total) * group / p;
    const uint64_t capped = pairs < in.universe ? static_cast<uint64_t>(pairs) : in.universe;
    hcBytes += messageCapacity(capped, in.universe, valueBytes, options.allowedEncodings);
  }
  return n > 1 && hcBytes >= denseFallbackBytes(in.universe, valueBytes, n);
}

// This rank's merged set, as pairs or (past the break-even of
// dense_stage.h) as a dense tensor, and the exchanges of one stage.
class MergedSet {
 public:
  MergedSet(CollContext& ctx, const SparseInput& in, const SparseRunOptions& options,
            SparseRunReport* report)
      : ctx_(ctx),
        in_(in),
        options_(options),
        report_(report),
        valueBytes_(spcclTypeSize(in.type)) {
    SparseWorkspace* w = in.workspace ? in.workspace : &local_;
    current_ = &w->currentSet;
    next_ = &w->mergedSet;
    encoded_ = &w->encodedSet;
    receiveBuffer_ = &w->receiveBuffer;
    theirs_ = &w->receivedSet;
    tensorStorage_ = &w->denseTensor;
    message_ = &w->denseMessage;
  }

  // The pairs this rank sent in its last exchange.
  uint64_t sentPairs() const { return sentPairs_; }

  // Sends the set to sendPeer (if >= 0); receives at most maxNnz pairs
  // from recvPeer (if >= 0) and merges them (`how`: which operand is the
  // lower ranks'). last: no exchange follows, so a sparse merge may write
  // the caller's dense output directly (merge and densify in one pass).
  spcclResult_t exchange(int sendPeer, int recvPeer, uint64_t maxNnz, DenseMerge how,
                         bool last = false) {
    std::vector<Outgoing> sends;
    std::vector<Incoming> incoming;
    if (sendPeer >= 0) {
      if (dense_) {
        size_t bytes = 0;
        const Encoding e =
            encodeDenseTensor(in_.type, tensor_, in_.universe, options_.allowedEncodings, message_,
                              &bytes, &denseNnz_, theirs_);
        sends.push_back({sendPeer, message_->data(), bytes, static_cast<uint8_t>(e)});
        sentPairs_ = denseNnz_;
      } else {
        const kernels::SortedPairs set = mine();
        sentPairs_ = set.count;
        size_t bytes = 0;  // (encoded_ only grows: no zero-fill per stage)
        const Encoding e = encodeSetInto(set.positions, set.values, set.count, in_.universe,
                                         valueBytes_, options_.allowedEncodings, encoded_, &bytes);
        sends.push_back({sendPeer, encoded_->data(), bytes, static_cast<uint8_t>(e)});
      }
    }
    if (recvPeer >= 0)
      incoming.push_back(
          {recvPeer,
           messageCapacity(maxNnz, in_.universe, valueBytes_, options_.allowedEncodings),
           {},
           0});
    if (recvPeer >= 0) incoming[0].data = std::move(*receiveBuffer_);
    const spcclResult_t exchanged = exchangeMessages(ctx_, sends, incoming, report_);
    if (recvPeer >= 0) *receiveBuffer_ = std::move(incoming[0].data);  // kept for the next one
    SPCCL_CHECK(exchanged);
    if (recvPeer < 0) return spcclSuccess;
    const MessageBuffer& data = *receiveBuffer_;
    const Incoming& m = incoming[0];
    const uint64_t theirPairs = messagePairs(data.data(), data.size());
    const uint64_t myPairs = how == DenseMerge::Place ? 0 : dense_ ? denseNnz_ : mine().count;
    if (!dense_ && mergeDensely(myPairs + theirPairs, in_.universe)) becomeDense(how);
    if (dense_)
      return mergeMessageIntoDense(ctx_.kernels(), in_.type, data.data(), data.size(), m.flags,
                                   in_.universe, options_.allowedEncodings, recvPeer, how, tensor_,
                                   theirs_);
    if (how == DenseMerge::Place) {
      SPCCL_CHECK(decodeSet(data.data(), data.size(), m.flags, in_.universe, valueBytes_,
                            options_.allowedEncodings, recvPeer, theirs_));
      std::swap(current_, theirs_);
      ownInput_ = false;
      return spcclSuccess;
    }
    // Merged straight from the message (received_merge.h): no decoded copy.
    const ReceivedMessage message{
        data.data(), data.size(), m.flags, in_.universe, options_.allowedEncodings, recvPeer};
    const bool theirsLower = how == DenseMerge::AddLower;
    if (last && in_.denseOutput != nullptr) {
      SPCCL_CHECK(mergeReceivedSetIntoDense(in_.type, mine(), message, theirsLower, theirs_,
                                            in_.denseOutput, &outputNnz_));
      inOutput_ = true;
      return spcclSuccess;
    }
    SPCCL_CHECK(mergeReceivedSet(in_.type, mine(), message, theirsLower, theirs_, next_));
    std::swap(current_, next_);
    ownInput_ = false;
    return spcclSuccess;
  }

  // The final result: into the caller's dense output when the tensor is
  // there already, else as pairs.
  void finish(SparseSet* result) {
    if (inOutput_) {
      result->inDenseOutput = true;
      result->denseOutputNnz = outputNnz_;
      return;
    }
    if (!dense_ && ownInput_) {  // no merge (one rank): the input is the result
      const auto* values = static_cast<const unsigned char*>(in_.values);
      result->positions.assign(in_.indices, in_.indices + in_.nnz);
      result->values.assign(values, values + in_.nnz * valueBytes_);
      return;
    }
    if (!dense_) {
      *result = std::move(*current_);
      return;
    }
    if (tensor_ == in_.denseOutput) {
      result->inDenseOutput = true;
      return;
    }
    const size_t count = static_cast<size_t>(in_.universe);
    result->positions.resize(count);
    result->values.resize(count * valueBytes_);
    const size_t nnz = kernels::extractNonZeros(in_.type, tensor_, count, result->positions.data(),
                                                result->values.data(), count);
    result->positions.resize(nnz);
    result->values.resize(nnz * valueBytes_);
  }

 private:
  // The set as pairs: the caller's input until the first merge, so the
  // first stage sends it without a copy.
  kernels::SortedPairs mine() const {
    return ownInput_ ? kernels::SortedPairs{in_.indices, in_.values, in_.nnz} : pairsOf(*current_);
  }

  // The pairs become a dense tensor: the caller's dense output if it has
  // one, else the workspace's. (Place: the message overwrites all of it.)
  void becomeDense(DenseMerge how) {
    const size_t bytes = static_cast<size_t>(in_.universe) * valueBytes_;
    if (in_.denseOutput != nullptr) {
      tensor_ = in_.denseOutput;
    } else {
      if (tensorStorage_->size() < bytes) tensorStorage_->resize(bytes);
      tensor_ = tensorStorage_->data();
    }
    const kernels::SortedPairs set = mine();
    if (how != DenseMerge::Place)
      kernels::densify(valueBytes_, set.positions, set.values, set.count, tensor_,
                       static_cast<size_t>(in_.universe));
    denseNnz_ = set.count;
    dense_ = true;
  }

  CollContext& ctx_;
  const SparseInput& in_;
  const SparseRunOptions& options_;
  SparseRunReport* report_;
  const size_t valueBytes_;
  SparseWorkspace local_;  // when the caller has no workspace
  // The workspace's (or local_'s) buffers, so that a call's sets,
  // messages and receive buffers keep their pages from the last call
  // (each was allocated, zero-filled and page-faulted in per stage).
  SparseSet* current_;  // the merged set, once ownInput_ is false
  SparseSet* next_;     // the merge's output, swapped in
  SparseSet* theirs_;   // the partner's set
  std::vector<unsigned char>* tensorStorage_;
  std::vector<unsigned char>* message_;
  std::vector<unsigned char>* encoded_;  // this stage's message
  MessageBuffer* receiveBuffer_;
  bool ownInput_ = true;  // current_ unused yet: the set is the input
  bool dense_ = false;
  bool inOutput_ = false;  // the last merge wrote the caller's dense output
  size_t outputNnz_ = 0;   // its non-zeros
  void* tensor_ = nullptr;
  size_t denseNnz_ = 0;  // as of the tensor's last encoding
  uint64_t sentPairs_ = 0;
};

}  // namespace

spcclResult_t hierarchicalCentralization(CollContext& ctx, const SparseInput& in,
                                         const SparseRunOptions& options, SparseSet* result,
                                         SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  const int n = ctx.nranks(), r = ctx.rank(), p = largestPowerOfTwoAtMost(n);
  uint64_t total = 0;
  for (int q = 0; q < n; ++q) total += rankNnz[q];
  if (preferDense(in, options, total, n, p))
    return denseFallback(ctx, in, SumOrder::Tree, result, report);
  MergedSet set(ctx, in, options, report);

  if (r >= p) {
    // Folded rank: hand the set to r-p, receive the final result.
    SPCCL_CHECK(set.exchange(r - p, -1, 0, DenseMerge::Place));
    SPCCL_CHECK(set.exchange(-1, r - p, total, DenseMerge::Place));
  } else {
    if (r + p < n) SPCCL_CHECK(set.exchange(-1, r + p, rankNnz[r + p], DenseMerge::AddHigher));
    for (int stage = 0; (1 << stage) < p; ++stage) {
      const int partner = r ^ (1 << stage);
      const bool last = 2 << stage >= p && r + p >= n;  // no folded partner waits for it
      SPCCL_CHECK(set.exchange(partner, partner, groupNnz(rankNnz, n, p, partner, stage),
                               partner < r ? DenseMerge::AddLower : DenseMerge::AddHigher, last));
      if (stage < kMaxMergeStages) {
        report->stageSetNnz[stage] = set.sentPairs();
        report->mergeStages = stage + 1;
      }
    }
    if (r + p < n) SPCCL_CHECK(set.exchange(r + p, -1, 0, DenseMerge::AddHigher));
  }
  set.finish(result);
  return spcclSuccess;
}

}  // namespace spccl::sparse

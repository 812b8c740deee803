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
//
// Pipelining (docs/algorithms.md 2.4): the index space is cut into pieces
// (message_pieces.h), each run as an HC set of its own (hc_piece.h), and a
// piece moves on to the next stage as soon as it is merged, so merging one
// piece overlaps the transfer of the next. Positions are added in the same
// order whatever piece holds them, so the bits do not depend on the cut.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/check.h"
#include "coll/partition.h"
#include "kernels/sparse_kernels.h"
#include "sparse/dense_stage.h"
#include "sparse/even_ranges.h"
#include "sparse/hc_piece.h"
#include "sparse/message_pieces.h"
#include "sparse/ordered_dense_allreduce.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

namespace {

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

// The exchanges of rank r, in order: fold in r+p's set (ranks p..n-1 fold
// into r-p first), the recursive-doubling stages, hand the result back.
std::vector<HcStep> rankSteps(const uint64_t* rankNnz, int n, int r, int p, uint64_t total) {
  std::vector<HcStep> steps;
  if (r >= p) {
    // Folded rank: hand the set to r-p, receive the final result.
    steps.push_back({r - p, -1, 0, DenseMerge::Place, false, -1});
    steps.push_back({-1, r - p, total, DenseMerge::Place, false, -1});
    return steps;
  }
  if (r + p < n) steps.push_back({-1, r + p, rankNnz[r + p], DenseMerge::AddHigher, false, -1});
  for (int stage = 0; (1 << stage) < p; ++stage) {
    const int partner = r ^ (1 << stage);
    const bool last = 2 << stage >= p && r + p >= n;  // no folded partner waits for it
    steps.push_back({partner, partner, groupNnz(rankNnz, n, p, partner, stage),
                     partner < r ? DenseMerge::AddLower : DenseMerge::AddHigher, last, stage});
  }
  if (r + p < n) steps.push_back({r + p, -1, 0, DenseMerge::AddHigher, false, -1});
  return steps;
}

// How many pieces the stages' messages are cut into: sized by the last
// stage's message (half of all the pairs, the largest), from agreed counts
// so that every rank cuts alike.
int pieceCount(const SparseInput& in, const SparseRunOptions& options, uint64_t total) {
  const size_t lastStageBytes =
      messageCapacity(total / 2, in.universe, spcclTypeSize(in.type), options.allowedEncodings);
  return messagePieces(lastStageBytes, options.pieceBytes, in.universe);
}

// Piece c's input: its share of the pairs (positions made relative to the
// piece's first), its universe, its slice of the dense output.
SparseInput pieceInput(const SparseInput& in, const EvenRanges& ranges, int c,
                       MergePieceBuffers* buffers) {
  SparseInput piece = in;
  piece.bucketer = nullptr;  // it buckets the whole input's pairs, not a piece's (review)
  const uint64_t lo = ranges.start(c), hi = lo + ranges.size(c);
  piece.universe = hi - lo;
  if (in.denseOutput != nullptr)
    piece.denseOutput = static_cast<unsigned char*>(in.denseOutput) + lo * spcclTypeSize(in.type);
  if (ranges.size(c) == in.universe) return piece;  // one piece: the input as it is
  const uint64_t* begin = std::lower_bound(in.indices, in.indices + in.nnz, lo);
  const uint64_t* end = std::lower_bound(begin, in.indices + in.nnz, hi);
  std::vector<uint64_t>& positions = buffers->inputPositions;
  positions.resize(static_cast<size_t>(end - begin));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = begin[i] - lo;
  piece.indices = positions.data();
  piece.values = static_cast<const unsigned char*>(in.values) +
                 static_cast<size_t>(begin - in.indices) * spcclTypeSize(in.type);
  piece.nnz = positions.size();
  return piece;
}

// The pieces' results as one: in the caller's dense output when it has one
// (a piece left as pairs is written into its slice), else the pairs joined
// in piece order, positions made global again.
void joinPieces(const SparseInput& in, const EvenRanges& ranges,
                std::vector<MergePieceBuffers>& buffers, int pieces, SparseSet* result) {
  const size_t valueBytes = spcclTypeSize(in.type);
  if (pieces == 1) {
    *result = std::move(buffers[0].result);
    return;
  }
  if (in.denseOutput != nullptr) {
    size_t nnz = 0;
    for (int c = 0; c < pieces; ++c) {
      SparseSet& part = buffers[c].result;
      if (!part.inDenseOutput) {
        kernels::densify(valueBytes, part.positions.data(), part.values.data(), part.size(),
                         static_cast<unsigned char*>(in.denseOutput) + ranges.start(c) * valueBytes,
                         static_cast<size_t>(ranges.size(c)));
        part.denseOutputNnz = SIZE_MAX;  // a merged pair may sum to zero: count them
      }
      nnz =
          nnz == SIZE_MAX || part.denseOutputNnz == SIZE_MAX ? SIZE_MAX : nnz + part.denseOutputNnz;
    }
    result->inDenseOutput = true;
    result->denseOutputNnz = nnz;
    return;
  }
  size_t total = 0;
  for (int c = 0; c < pieces; ++c) total += buffers[c].result.size();
  result->positions.resize(total);
  result->values.resize(total * valueBytes);
  size_t at = 0;
  for (int c = 0; c < pieces; ++c) {
    const SparseSet& part = buffers[c].result;
    const uint64_t lo = ranges.start(c);
    for (size_t i = 0; i < part.size(); ++i) result->positions[at + i] = part.positions[i] + lo;
    std::memcpy(result->values.data() + at * valueBytes, part.values.data(),
                part.size() * valueBytes);
    at += part.size();
  }
}

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

  const int pieces = pieceCount(in, options, total);
  std::vector<MergePieceBuffers> local;  // when the caller has no workspace
  std::vector<MergePieceBuffers>& buffers = in.workspace ? in.workspace->mergePieces : local;
  if (buffers.size() < static_cast<size_t>(pieces)) buffers.resize(static_cast<size_t>(pieces));
  const EvenRanges ranges(in.universe, pieces);
  std::vector<SparseInput> inputs;
  std::vector<HcPiece> set;
  inputs.reserve(static_cast<size_t>(pieces));
  set.reserve(static_cast<size_t>(pieces));
  for (int c = 0; c < pieces; ++c) {
    inputs.push_back(pieceInput(in, ranges, c, &buffers[c]));
    set.emplace_back(ctx, inputs.back(), options, report, &buffers[c]);
  }

  // The pipeline: piece c of step i+1 is posted as soon as piece c of step
  // i is merged, while the later pieces of step i are still arriving.
  const std::vector<HcStep> steps = rankSteps(rankNnz, n, r, p, total);
  if (!steps.empty())  // (one rank: no exchange, the input is the result)
    for (HcPiece& piece : set) SPCCL_CHECK(piece.post(steps[0]));
  for (size_t i = 0; i < steps.size(); ++i) {
    uint64_t sent = 0;
    for (HcPiece& piece : set) {
      sent += piece.sentPairs();
      SPCCL_CHECK(piece.complete(steps[i]));
      if (i + 1 < steps.size()) SPCCL_CHECK(piece.post(steps[i + 1]));
    }
    const int stage = steps[i].stage;
    if (stage >= 0 && stage < kMaxMergeStages) {
      report->stageSetNnz[stage] = sent;
      report->mergeStages = stage + 1;
    }
  }
  for (int c = 0; c < pieces; ++c) {
    SPCCL_CHECK(set[c].drain());
    set[c].finish(&buffers[c].result);
  }
  joinPieces(in, ranges, buffers, pieces, result);
  return spcclSuccess;
}

}  // namespace spccl::sparse

// AGsparse (Zen Table 3, [37]): the baseline with one-shot aggregation and
// centralization. Every rank sends its whole set to every other rank and
// each sums all n sets in rank order; overlaps are never exploited, so the
// traffic grows with n whatever gamma is (Zen section 2.4, Figure 8).
#include <utility>
#include <vector>

#include "base/check.h"
#include "sparse/dense_stage.h"
#include "sparse/ordered_dense_allreduce.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

namespace {

// Past the break-even (dense_stage.h: M/8 pairs in all), n - 1 two-finger
// merges of nearly dense sets cost several passes over the tensor each; the
// n sets are added into the caller's dense output instead, in the same rank
// order as the merges ((set_0 + set_1) + set_2 ...), so the bits are
// theirs. This rank's own set is added from its encoded message.
spcclResult_t sumIntoDenseOutput(CollContext& ctx, const SparseInput& in,
                                 const SparseRunOptions& options,
                                 const std::vector<unsigned char>& mine, Encoding mineEncoding,
                                 const std::vector<Incoming>& incoming, SparseSet* result) {
  const int n = ctx.nranks(), r = ctx.rank();
  std::vector<const Incoming*> byRank(n, nullptr);
  for (const Incoming& m : incoming) byRank[m.peer] = &m;
  SparseSet scratch;
  for (int q = 0; q < n; ++q) {
    const bool own = q == r;
    const unsigned char* data = own ? mine.data() : byRank[q]->data.data();
    const size_t bytes = own ? mine.size() : byRank[q]->data.size();
    const uint8_t flags = own ? static_cast<uint8_t>(mineEncoding) : byRank[q]->flags;
    SPCCL_CHECK(mergeMessageIntoDense(
        ctx.kernels(), in.type, data, bytes, flags, in.universe, options.allowedEncodings, q,
        q == 0 ? DenseMerge::Place : DenseMerge::AddHigher, in.denseOutput, &scratch));
  }
  result->inDenseOutput = true;
  return spcclSuccess;
}

// Past the point where the n - 1 copies of this rank's set cost half the
// dense all-reduce's bytes (near d = 1/(2n) of f32 values with Bitmap), the
// schedule moves more and sums n nearly dense sets: the dense fallback
// (ordered_dense_allreduce.h) adds the same values in the same rank order
// for the ring's traffic. From agreed counts: every rank decides alike.
bool preferDense(const SparseInput& in, const SparseRunOptions& options, const uint64_t* rankNnz,
                 int n) {
  const size_t valueBytes = spcclTypeSize(in.type);
  unsigned __int128 sparseBytes = 0;  // per rank, averaged over ranks
  for (int q = 0; q < n; ++q)
    sparseBytes += messageCapacity(rankNnz[q], in.universe, valueBytes, options.allowedEncodings);
  sparseBytes = sparseBytes * static_cast<unsigned>(n - 1) / static_cast<unsigned>(n);
  return n > 1 && 2 * sparseBytes >= denseFallbackBytes(in.universe, valueBytes, n);
}

}  // namespace

spcclResult_t allGatherSparse(CollContext& ctx, const SparseInput& in,
                              const SparseRunOptions& options, SparseSet* result,
                              SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  const int n = ctx.nranks(), r = ctx.rank();
  if (preferDense(in, options, rankNnz, n))
    return denseFallback(ctx, in, SumOrder::RankOrder, result, report);
  const size_t valueBytes = spcclTypeSize(in.type);
  std::vector<unsigned char> encoded;
  Encoding e = encodeSet(in.indices, in.values, in.nnz, in.universe, valueBytes,
                         options.allowedEncodings, &encoded);
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, encoded.data(), encoded.size(), static_cast<uint8_t>(e)});
    incoming.push_back(
        {q, messageCapacity(rankNnz[q], in.universe, valueBytes, options.allowedEncodings), {}, 0});
  }
  SPCCL_CHECK(exchangeMessages(ctx, sends, incoming, report));
  uint64_t totalPairs = 0;
  for (int q = 0; q < n; ++q) totalPairs += rankNnz[q];
  if (in.denseOutput != nullptr && mergeDensely(totalPairs, in.universe))
    return sumIntoDenseOutput(ctx, in, options, encoded, e, incoming, result);
  std::vector<SparseSet> sets(n);
  for (Incoming& m : incoming)
    SPCCL_CHECK(decodeSet(m.data.data(), m.data.size(), m.flags, in.universe, valueBytes,
                          options.allowedEncodings, m.peer, &sets[m.peer]));
  sets[r].positions.assign(in.indices, in.indices + in.nnz);
  const unsigned char* mine = static_cast<const unsigned char*>(in.values);
  sets[r].values.assign(mine, mine + in.nnz * valueBytes);
  // Summed in rank order, ((set_0 + set_1) + set_2) + ...: the same bits on
  // every rank.
  SparseSet sum = std::move(sets[0]), next;
  for (int q = 1; q < n; ++q) {
    mergeSets(in.type, valueBytes, sum, sets[q], &next);
    std::swap(sum, next);
  }
  *result = std::move(sum);
  return spcclSuccess;
}

}  // namespace spccl::sparse

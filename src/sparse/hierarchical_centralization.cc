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
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

namespace {

struct Exchange {
  CollContext& ctx;
  const SparseInput& in;
  const SparseRunOptions& options;
  size_t valueBytes;
  SparseRunReport* report;
};

// Sends `mine` to sendPeer (if >= 0) and receives a set of at most maxNnz
// pairs from recvPeer (if >= 0) into *received.
spcclResult_t swapSets(const Exchange& x, int sendPeer, const SparseSet& mine, int recvPeer,
                       uint64_t maxNnz, SparseSet* received) {
  std::vector<unsigned char> encoded;
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  if (sendPeer >= 0) {
    Encoding e = encodeSet(mine.positions.data(), mine.values.data(), mine.size(), x.in.universe,
                           x.valueBytes, x.options.allowedEncodings, &encoded);
    sends.push_back({sendPeer, encoded.data(), encoded.size(), static_cast<uint8_t>(e)});
  }
  if (recvPeer >= 0)
    incoming.push_back(
        {recvPeer,
         messageCapacity(maxNnz, x.in.universe, x.valueBytes, x.options.allowedEncodings),
         {},
         0});
  SPCCL_CHECK(exchangeMessages(x.ctx, sends, incoming, x.report));
  if (recvPeer < 0) return spcclSuccess;
  return decodeSet(incoming[0].data.data(), incoming[0].data.size(), incoming[0].flags,
                   x.in.universe, x.valueBytes, x.options.allowedEncodings, recvPeer, received);
}

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

}  // namespace

spcclResult_t hierarchicalCentralization(CollContext& ctx, const SparseInput& in,
                                         const SparseRunOptions& options, SparseSet* result,
                                         SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  const int n = ctx.nranks(), r = ctx.rank(), p = largestPowerOfTwoAtMost(n);
  const size_t valueBytes = spcclTypeSize(in.type);
  Exchange x{ctx, in, options, valueBytes, report};
  uint64_t total = 0;
  for (int q = 0; q < n; ++q) total += rankNnz[q];

  // next: the merge's output, swapped in; theirs: the partner's set. Both
  // from the workspace when there is one, so they keep their pages.
  SparseSet localNext, localTheirs;
  SparseSet& next = in.workspace ? in.workspace->mergedSet : localNext;
  SparseSet& theirs = in.workspace ? in.workspace->receivedSet : localTheirs;
  SparseSet current;
  current.positions.assign(in.indices, in.indices + in.nnz);
  const unsigned char* values = static_cast<const unsigned char*>(in.values);
  current.values.assign(values, values + in.nnz * valueBytes);

  if (r >= p) {
    // Folded rank: hand the set to r-p, receive the final result.
    SparseSet result;
    SPCCL_CHECK(swapSets(x, r - p, current, -1, 0, nullptr));
    SPCCL_CHECK(swapSets(x, -1, current, r - p, total, &result));
    current = std::move(result);
  } else {
    if (r + p < n) {
      SPCCL_CHECK(swapSets(x, -1, current, r + p, rankNnz[r + p], &theirs));
      mergeSets(ctx.kernels(), in.type, valueBytes, current, theirs, &next);
      std::swap(current, next);
    }
    for (int stage = 0; (1 << stage) < p; ++stage) {
      const int partner = r ^ (1 << stage);
      if (stage < kMaxMergeStages) {
        report->stageSetNnz[stage] = current.size();
        report->mergeStages = stage + 1;
      }
      SPCCL_CHECK(
          swapSets(x, partner, current, partner, groupNnz(rankNnz, n, p, partner, stage), &theirs));
      if (partner < r)
        mergeSets(ctx.kernels(), in.type, valueBytes, theirs, current, &next);
      else
        mergeSets(ctx.kernels(), in.type, valueBytes, current, theirs, &next);
      std::swap(current, next);
    }
    if (r + p < n) SPCCL_CHECK(swapSets(x, r + p, current, -1, 0, nullptr));
  }
  *result = std::move(current);
  return spcclSuccess;
}

}  // namespace spccl::sparse

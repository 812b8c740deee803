// AGsparse (Zen Table 3, [37]): the baseline with one-shot aggregation and
// centralization. Every rank sends its whole set to every other rank and
// each sums all n sets in rank order; overlaps are never exploited, so the
// traffic grows with n whatever gamma is (Zen section 2.4, Figure 8).
#include <utility>
#include <vector>

#include "base/check.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

spcclResult_t allGatherSparse(CollContext& ctx, const SparseInput& in,
                              const SparseRunOptions& options, SparseSet* result,
                              SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  const int n = ctx.nranks(), r = ctx.rank();
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
    mergeSets(ctx.kernels(), in.type, valueBytes, sum, sets[q], &next);
    std::swap(sum, next);
  }
  *result = std::move(sum);
  return spcclSuccess;
}

}  // namespace spccl::sparse

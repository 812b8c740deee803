// AGsparse (Zen Table 3, [37]): the baseline with one-shot aggregation and
// centralization. Every rank sends its whole set to every other rank and
// each sums all n sets in rank order; overlaps are never exploited, so the
// traffic grows with n whatever gamma is (Zen section 2.4, Figure 8).
#include <vector>

#include "core/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

spcclResult_t allGatherSparse(CollContext& ctx, const SparseInput& in,
                              const SparseRunOptions& options, void* dense,
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
  for (int q = 0; q < n; ++q) {
    if (q == r)
      kernels::scatterReduce(in.type, spcclSum, dense, in.indices, in.values, in.nnz);
    else
      kernels::scatterReduce(in.type, spcclSum, dense, sets[q].positions.data(),
                             sets[q].values.data(), sets[q].size());
  }
  if (report) report->outputNnz = kernels::countNonZeros(in.type, dense, in.universe);
  return spcclSuccess;
}

}  // namespace spccl::sparse

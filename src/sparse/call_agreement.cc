#include "sparse/call_agreement.h"

#include <cinttypes>

#include "base/check.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

spcclResult_t agreeOnCall(CollContext& ctx, const SparseCallHeader& mine,
                          std::vector<SparseCallHeader>* all) {
  all->assign(static_cast<size_t>(ctx.nranks()), SparseCallHeader{});
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), all->data()));
  // A rank's own input error is already this thread's message; the others
  // learn that it will not take part.
  if (!mine.inputValid) return spcclInvalidArgument;
  for (int r = 0; r < ctx.nranks(); ++r)
    if (!(*all)[r].inputValid && r != ctx.rank())
      return SPCCL_FAIL(spcclInvalidUsage,
                        "spcclSparseAllReduce: rank %d rejected its input (see its error); the "
                        "call fails on every rank",
                        r);
  const SparseCallHeader& first = (*all)[0];
  for (int r = 1; r < ctx.nranks(); ++r) {
    const SparseCallHeader& h = (*all)[r];
    const char* what = h.algorithm != first.algorithm       ? "algorithm"
                       : h.encoding != first.encoding       ? "encoding"
                       : h.partitioner != first.partitioner ? "partitioner"
                       : h.tag != first.tag                 ? "tag"
                                                            : nullptr;
    if (what == nullptr) continue;
    return SPCCL_FAIL(spcclInvalidUsage,
                      "spcclSparseAllReduce: ranks disagree on the options: rank %d asked for "
                      "%s (algorithm %d, encoding %d, partitioner %d, tag %" PRIu64
                      ") but rank 0 for (algorithm %d, encoding %d, partitioner %d, tag %" PRIu64
                      ")",
                      r, what, h.algorithm, h.encoding, h.partitioner, h.tag, first.algorithm,
                      first.encoding, first.partitioner, first.tag);
  }
  return spcclSuccess;
}

}  // namespace spccl::sparse

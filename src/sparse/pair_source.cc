#include "sparse/pair_source.h"

#include "base/check.h"

namespace spccl::sparse {

spcclResult_t fetchInsideCall(CollContext& ctx, PairSource& source, const uint64_t** indices,
                              const unsigned char** values) {
  const spcclResult_t fetched = source.fetch(indices, values);
  if (fetched != spcclSuccess) ctx.abortCall(fetched, threadLastError());
  return fetched;
}

}  // namespace spccl::sparse

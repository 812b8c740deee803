// Dissemination barrier (Hensgen, Finkel & Manber, "Two algorithms for
// barrier synchronization", IJPP 1988): in round k rank r signals r+2^k and
// waits for r-2^k; after ceil(log2 n) rounds every rank has transitively
// heard from all others, for any n.
#include "base/check.h"
#include "coll/partition.h"
#include "coll/schedule_support.h"
#include "coll/schedules.h"

namespace spccl {

spcclResult_t disseminationBarrier(CollContext& ctx, const CollArgs& /*args*/) {
  const int rank = ctx.rank(), n = ctx.nranks();
  char token = 0;  // zero-byte messages still need a valid address
  for (int distance = 1; distance < n; distance *= 2) {
    const int from = positiveMod(rank - distance, n);
    size_t received = 0;
    SPCCL_CHECK(ctx.sendRecv((rank + distance) % n, &token, 0, from, &token, 0, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, from, received, 0, "dissemination"));
  }
  return spcclSuccess;
}

}  // namespace spccl

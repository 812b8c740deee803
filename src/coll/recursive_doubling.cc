// Recursive doubling all-reduce (Thakur, Rabenseifner & Gropp, "Optimization
// of collective communication operations in MPICH", IJHPCA 2005, §4.4):
// log2 p rounds in which partners r and r^2^k swap their whole buffers.
// Ranks beyond the largest power of two p fold into r - p first and get
// the result back at the end. Partners always combine as
// reduce(dst, lower rank's data, higher rank's data), so both compute the
// same bits and every rank ends with the identical result.
#include <cstring>

#include "base/check.h"
#include "coll/partition.h"
#include "coll/schedule_support.h"
#include "coll/schedules.h"

namespace spccl {

spcclResult_t recursiveDoublingAllReduce(CollContext& ctx, const CollArgs& args) {
  const int rank = ctx.rank();
  const size_t bytes = args.count * elementSize(args);
  char* result = bytePointer(args.recvbuff);
  const FoldRole role = foldRole(rank, ctx.nranks());
  size_t received = 0;

  if (role.folded) {
    SPCCL_CHECK(ctx.send(role.foldPartner, args.sendbuff, bytes));
    SPCCL_CHECK(ctx.recv(role.foldPartner, result, bytes, &received));
    return checkReceivedBytes(ctx, role.foldPartner, received, bytes, "recursive_doubling");
  }

  if (args.sendbuff != args.recvbuff) std::memmove(result, args.sendbuff, bytes);
  char* landing = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, bytes, kScratchLanding, &landing));
  const kernels::ReduceFn reduce = reducerFor(ctx, args);

  if (role.foldPartner >= 0) {  // host of a folded rank, which is the higher one
    SPCCL_CHECK(ctx.recv(role.foldPartner, landing, bytes, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, role.foldPartner, received, bytes, "recursive_doubling"));
    reduce(result, result, landing, args.count);
  }
  for (int distance = 1; distance < role.powerOfTwo; distance *= 2) {
    const int partner = rank ^ distance;
    SPCCL_CHECK(ctx.sendRecv(partner, result, bytes, partner, landing, bytes, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, partner, received, bytes, "recursive_doubling"));
    if (rank < partner)
      reduce(result, result, landing, args.count);
    else
      reduce(result, landing, result, args.count);
  }
  if (role.foldPartner >= 0) SPCCL_CHECK(ctx.send(role.foldPartner, result, bytes));
  return spcclSuccess;
}

}  // namespace spccl

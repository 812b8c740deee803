// Ring reduce-scatter and all-gather (Patarasuk & Yuan, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations", JPDC 2009): the
// buffer is cut into n blocks; in reduce-scatter step s rank r passes
// block r-s-1 to r+1 and folds block r-s-2 arriving from r-1 into its own,
// so after n-1 steps rank r holds block r fully reduced; all-gather then
// circulates the reduced blocks for n-1 more steps. Every block's partial
// sum travels the ring in one fixed order, and all-gather copies the
// reduced bits, so results are reproducible and identical on all ranks.
//
// Each step is cut into slices; a reduced slice is forwarded as soon as it
// exists, which turns the 2(n-1) steps into one continuous stream.
#include <cstring>

#include "base/check.h"
#include "coll/partition.h"
#include "coll/relay.h"
#include "coll/ring_plan.h"
#include "coll/schedules.h"

namespace spccl {

namespace {

// totalCount: elements of the whole n-block buffer.
spcclResult_t runRing(CollContext& ctx, const CollArgs& args, size_t totalCount, bool reduceScatter,
                      bool allGather, RingBuffers buffers) {
  const int rank = ctx.rank(), nranks = ctx.nranks();
  const size_t es = elementSize(args);
  const size_t sliceElems = ringSliceElements(ctx.chunkBytes(), totalCount, nranks, es);
  if (reduceScatter)
    SPCCL_CHECK(acquireScratch(ctx, 2 * sliceElems * es, kScratchLanding, &buffers.landing));
  if (buffers.ownBlockOutput != nullptr)
    SPCCL_CHECK(acquireScratch(ctx, kRelayStagingSlices * sliceElems * es, kScratchStaging,
                               &buffers.staging));
  RingPlan plan(rank, nranks, totalCount, sliceElems, es, reduceScatter, allGather, buffers);
  kernels::ReduceFn reduce = reduceScatter ? reducerFor(ctx, args) : nullptr;
  return runRelay(ctx, plan, positiveMod(rank - 1, nranks), (rank + 1) % nranks, es, reduce,
                  "ring");
}

}  // namespace

spcclResult_t ringAllReduce(CollContext& ctx, const CollArgs& args) {
  RingBuffers buffers;
  buffers.input = bytePointer(args.sendbuff);  // read before each block is overwritten
  buffers.output = bytePointer(args.recvbuff);
  return runRing(ctx, args, args.count, true, true, buffers);
}

spcclResult_t ringReduceScatter(CollContext& ctx, const CollArgs& args) {
  RingBuffers buffers;
  buffers.input = bytePointer(args.sendbuff);
  buffers.ownBlockOutput = bytePointer(args.recvbuff);
  size_t total = args.count * static_cast<size_t>(ctx.nranks());
  return runRing(ctx, args, total, true, false, buffers);
}

spcclResult_t ringAllGather(CollContext& ctx, const CollArgs& args) {
  const size_t blockBytes = args.count * elementSize(args);
  char* ownBlock = bytePointer(args.recvbuff) + static_cast<size_t>(ctx.rank()) * blockBytes;
  if (args.sendbuff != ownBlock) std::memmove(ownBlock, args.sendbuff, blockBytes);
  RingBuffers buffers;
  buffers.output = bytePointer(args.recvbuff);
  size_t total = args.count * static_cast<size_t>(ctx.nranks());
  return runRing(ctx, args, total, false, true, buffers);
}

}  // namespace spccl

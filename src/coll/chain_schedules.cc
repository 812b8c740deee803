// Pipelined chains over relative ranks 0 (the root), 1, ..., n-1: with k
// slices the last one lands after n-2+k hops of S/k bytes, which
// approaches S*beta for large S however long the chain. Broadcast flows
// down the chain, each rank relaying a slice as soon as it has it; reduce
// flows up, the farthest rank sending its own data and each rank folding
// its contribution in before relaying. The reduction order is fixed,
// x0 op (x1 op (... op x(n-1))), and independent of the slicing, so
// results are reproducible.
#include <cstring>

#include "base/check.h"
#include "coll/chain_plans.h"
#include "coll/cost_model.h"
#include "coll/relay.h"
#include "coll/schedules.h"

namespace spccl {

namespace {

// The slice count the cost model found best (every rank shares the link
// model, so all cut the same way), as elements per slice.
size_t chainSliceElements(const CollContext& ctx, const CollArgs& args) {
  CostInput input;
  input.bytes = args.count * elementSize(args);
  input.nranks = ctx.nranks();
  input.link = ctx.linkModel();
  input.chunkBytes = ctx.chunkBytes();
  size_t slices = chainSliceCount(input);
  return (args.count + slices - 1) / slices;
}

}  // namespace

spcclResult_t pipelinedChainBroadcast(CollContext& ctx, const CollArgs& args) {
  const ChainPosition position = chainPosition(ctx.rank(), args.root, ctx.nranks());
  const size_t es = elementSize(args);
  char* buffer = bytePointer(args.recvbuff);
  if (position.isRoot() && args.sendbuff != args.recvbuff)
    std::memmove(buffer, args.sendbuff, args.count * es);
  BroadcastChainPlan plan(position, buffer, args.count, chainSliceElements(ctx, args), es);
  return runRelay(ctx, plan, position.towardsRoot, position.awayFromRoot, es, nullptr,
                  "pipelined_chain");
}

spcclResult_t pipelinedChainReduce(CollContext& ctx, const CollArgs& args) {
  const ChainPosition position = chainPosition(ctx.rank(), args.root, ctx.nranks());
  const size_t es = elementSize(args);
  const size_t sliceElems = chainSliceElements(ctx, args);
  char* landing = nullptr;
  char* staging = nullptr;
  if (!position.isLast())
    SPCCL_CHECK(acquireScratch(ctx, 2 * sliceElems * es, kScratchLanding, &landing));
  if (!position.isLast() && !position.isRoot())
    SPCCL_CHECK(
        acquireScratch(ctx, kRelayStagingSlices * sliceElems * es, kScratchStaging, &staging));
  ReduceChainPlan plan(position, bytePointer(args.sendbuff), bytePointer(args.recvbuff), landing,
                       staging, args.count, sliceElems, es);
  // Data flows away from the root's far end: upstream is the next rank out.
  return runRelay(ctx, plan, position.awayFromRoot, position.towardsRoot, es, reducerFor(ctx, args),
                  "pipelined_chain");
}

}  // namespace spccl

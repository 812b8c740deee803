// The run functions of the dense algorithms, one per table entry in
// algorithms.cc. Each expects validated arguments, nranks >= 2 and a
// non-empty payload; runDenseCollective handles the trivial cases and
// Avg's division.
#pragma once

#include "coll/collective.h"

namespace spccl {

// ring_schedules.cc
spcclResult_t ringAllReduce(CollContext& ctx, const CollArgs& args);
spcclResult_t ringReduceScatter(CollContext& ctx, const CollArgs& args);
spcclResult_t ringAllGather(CollContext& ctx, const CollArgs& args);
// recursive_doubling.cc
spcclResult_t recursiveDoublingAllReduce(CollContext& ctx, const CollArgs& args);
// binomial_tree.cc
spcclResult_t binomialBroadcast(CollContext& ctx, const CollArgs& args);
spcclResult_t binomialReduce(CollContext& ctx, const CollArgs& args);
// chain_schedules.cc
spcclResult_t pipelinedChainBroadcast(CollContext& ctx, const CollArgs& args);
spcclResult_t pipelinedChainReduce(CollContext& ctx, const CollArgs& args);
// pairwise_exchange.cc (AllToAll and AllToAllv)
spcclResult_t pairwiseAllToAll(CollContext& ctx, const CollArgs& args);
// dissemination_barrier.cc
spcclResult_t disseminationBarrier(CollContext& ctx, const CollArgs& args);

}  // namespace spccl

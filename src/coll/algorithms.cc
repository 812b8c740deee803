// The one table of dense algorithms: selection, logs, spccl_info and the
// perf binaries all read it.
#include "coll/cost_model.h"
#include "coll/schedules.h"

namespace spccl {

namespace {

constexpr DenseAlgorithm kDenseAlgorithms[] = {
    {"ring", CollType::AllReduce,
     "reduce-scatter then all-gather around a ring, pipelined in slices; bandwidth-optimal",
     ringAllReduceCost, ringAllReduce},
    {"recursive_doubling", CollType::AllReduce,
     "log2(n) whole-buffer exchanges, non-power-of-two ranks folded in; latency-optimal",
     recursiveDoublingAllReduceCost, recursiveDoublingAllReduce},
    {"ring", CollType::ReduceScatter, "the reduce-scatter half of ring all-reduce", ringHalfCost,
     ringReduceScatter},
    {"ring", CollType::AllGather, "n-1 ring steps, pipelined in slices", ringHalfCost,
     ringAllGather},
    {"binomial", CollType::Broadcast, "binomial tree from the root, ceil(log2 n) rounds",
     binomialTreeCost, binomialBroadcast},
    {"pipelined_chain", CollType::Broadcast,
     "chain from the root, each rank relaying slices as they arrive", pipelinedChainCost,
     pipelinedChainBroadcast},
    {"binomial", CollType::Reduce, "binomial tree towards the root, reducing at each node",
     binomialTreeCost, binomialReduce},
    {"pipelined_chain", CollType::Reduce,
     "chain towards the root, each rank reducing slices into the stream", pipelinedChainCost,
     pipelinedChainReduce},
    {"pairwise", CollType::AllToAll, "n-1 steps, step s sends to r+s and receives from r-s",
     pairwiseExchangeCost, pairwiseAllToAll},
    {"pairwise", CollType::AllToAllv, "n-1 steps, step s sends to r+s and receives from r-s",
     pairwiseExchangeCost, pairwiseAllToAll},
    {"dissemination", CollType::Barrier, "ceil(log2 n) rounds of zero-byte messages to r+2^k",
     disseminationCost, disseminationBarrier},
};

}  // namespace

std::span<const DenseAlgorithm> denseAlgorithms() { return kDenseAlgorithms; }

}  // namespace spccl

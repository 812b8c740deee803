// Selection and execution of one dense collective: the trivial cases,
// the choice from the table, and Avg's final division.
#include <cstring>

#include "base/check.h"
#include "coll/cost_model.h"
#include "coll/schedule_support.h"

namespace spccl {

namespace {

// why: nullptr, or where the reason goes (the call's COLL line is on).
const DenseAlgorithm& selectFor(const CollArgs& args, const CostInput& input,
                                const std::string& override, std::string* why = nullptr) {
  bool overridden = false;
  const DenseAlgorithm* chosen =
      chooseDenseAlgorithm(denseAlgorithms(), args.type, input, override, &overridden);
  if (chosen == nullptr) {
    // The API layer routes only dense collectives here.
    SPCCL_WARN("internal: no dense algorithm implements %s; using %s", collTypeName(args.type),
               denseAlgorithms()[0].name);
    return denseAlgorithms()[0];
  }
  SPCCL_TRACE(kLogTune, "%s of %zu bytes on %d ranks: %s (%s, model %.1f us)",
              collTypeName(args.type), input.bytes, input.nranks, chosen->name,
              overridden ? "SPCCL_ALGO" : "alpha-beta", chosen->cost(input) * 1e6);
  if (why != nullptr)
    *why = explainDenseChoice(denseAlgorithms(), *chosen, input, override, overridden);
  return *chosen;
}

// With one rank every collective is a copy (or nothing, in place).
void runSingleRank(const CollArgs& args) {
  const size_t es = elementSize(args);
  const char* from = bytePointer(args.sendbuff);
  char* to = bytePointer(args.recvbuff);
  size_t bytes = args.count * es;
  if (args.type == CollType::Barrier) return;
  if (args.type == CollType::AllToAllv) {
    from += args.sdispls[0] * es;
    to += args.rdispls[0] * es;
    bytes = args.recvcounts[0] * es;
  }
  if (from != to && bytes > 0) std::memmove(to, from, bytes);
}

bool hasNothingToMove(const CollArgs& args) {
  // AllToAllv's count is unused; its per-peer counts may be zero on some
  // ranks only, so it always runs its (cheap) schedule.
  return args.type != CollType::Barrier && args.type != CollType::AllToAllv && args.count == 0;
}

// Avg ran as Sum; divide where the result lives.
void finishAverage(const CollContext& ctx, const CollArgs& args) {
  const bool holdsResult = args.type == CollType::AllReduce ||
                           args.type == CollType::ReduceScatter ||
                           (args.type == CollType::Reduce && ctx.rank() == args.root);
  if (holdsResult) ctx.kernels().divide[args.datatype](args.recvbuff, args.count, ctx.nranks());
}

}  // namespace

spcclResult_t runDenseCollective(CollContext& ctx, const CollArgs& args,
                                 const std::string& algorithmOverride) {
  if (hasNothingToMove(args)) {  // every rank sees the same count
    ctx.noteChoice("none", "count 0: nothing to move");
    return spcclSuccess;
  }
  if (ctx.nranks() == 1) {
    ctx.noteChoice("local_copy", "one rank");
    runSingleRank(args);
    return spcclSuccess;
  }
  CostInput input;
  input.bytes = denseCostBytes(args, ctx.nranks());
  input.nranks = ctx.nranks();
  input.link = ctx.linkModel();
  input.chunkBytes = ctx.chunkBytes();
  std::string why;
  const DenseAlgorithm& algorithm =
      selectFor(args, input, algorithmOverride, ctx.explainsChoice() ? &why : nullptr);
  ctx.noteChoice(algorithm.name, why);

  CollArgs runArgs = args;
  if (runArgs.op == spcclAvg) runArgs.op = spcclSum;
  SPCCL_CHECK(algorithm.run(ctx, runArgs));
  if (args.op == spcclAvg) finishAverage(ctx, args);
  return spcclSuccess;
}

}  // namespace spccl

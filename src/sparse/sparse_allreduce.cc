#include "sparse/sparse_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <memory>

#include "base/check.h"
#include "base/knobs.h"
#include "coll/collective.h"
#include "kernels/sparse_kernels.h"
#include "sparse/call_agreement.h"
#include "sparse/comm_state.h"
#include "sparse/cpu_calibration.h"
#include "sparse/dense_stage.h"
#include "sparse/pair_source.h"
#include "sparse/partitioner_table.h"
#include "sparse/planner.h"
#include "sparse/sparse_algorithm_table.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_output.h"
#include "sparse/sparse_workspace.h"

namespace spccl::sparse {

namespace {

SparseRunOptions runOptions(const SparseOptions& o, uint64_t seed, uint64_t pieceBytes) {
  SparseRunOptions run;
  run.seed = seed;
  run.pieceBytes = pieceBytes;
  run.allowedEncodings =
      o.encoding == spcclEncodingAuto ? kAllEncodings : 1u << static_cast<unsigned>(o.encoding);
  const SparsePartitionerInfo& partitioner = sparsePartitioner(o.partitioner);
  run.partition = partitioner.partition;
  run.bucketing = partitioner.bucketing;
  return run;
}

// Points the call's non-zeros at its COO set, or extracts the dense
// input's into the workspace: one pass, sized by the largest earlier input,
// and a second pass only when this input has more non-zeros than that.
// Pairs not on the host yet (SparseCall::pairSource) stay where they are.
void extractInput(SparseCall& call, SparseWorkspace& workspace) {
  if (call.nonZeroIndices != nullptr || call.pairSource != nullptr) return;  // done, or elsewhere
  if (call.denseInput != nullptr) {
    const size_t valueBytes = spcclTypeSize(call.type);
    auto capacity = [&] {
      return std::min(workspace.inputIndices.size(), workspace.inputValues.size() / valueBytes);
    };
    size_t nnz = kernels::extractNonZeros(call.type, call.denseInput, call.count,
                                          workspace.inputIndices.data(),
                                          workspace.inputValues.data(), capacity());
    if (nnz > capacity()) {
      workspace.inputIndices.resize(nnz);
      workspace.inputValues.resize(nnz * valueBytes);
      nnz = kernels::extractNonZeros(call.type, call.denseInput, call.count,
                                     workspace.inputIndices.data(), workspace.inputValues.data(),
                                     nnz);
    }
    call.nonZeroIndices = workspace.inputIndices.data();
    call.nonZeroValues = workspace.inputValues.data();
    call.nnz = nnz;
  } else {
    call.nonZeroIndices = call.indices.data();
    call.nonZeroValues = call.values.data();
    call.nnz = call.indices.size();
  }
}

// Dense: the whole tensor through the dense all-reduce, from the dense
// input as it is, or from a COO input scattered into a zeroed buffer; into
// the dense output, or for a COO output into a scratch tensor whose
// non-zeros then become *result (*inOutput says which).
spcclResult_t runDense(CollContext& ctx, SparseCall& call, SparseSet* result, bool* inOutput,
                       SparseRunReport* report) {
  const size_t valueBytes = spcclTypeSize(call.type);
  std::vector<unsigned char> scratch;
  void* out = call.denseOutput;
  if (call.cooOutput) {
    scratch.resize(call.count * valueBytes);
    out = scratch.data();
  }
  const void* in = call.denseInput;
  if (in == nullptr) {
    if (!call.cooOutput) std::memset(out, 0, call.count * valueBytes);
    kernels::scatterReduce(call.type, spcclSum, out, call.nonZeroIndices, call.nonZeroValues,
                           call.nnz);
    in = out;
  }
  CollArgs args;
  args.type = CollType::AllReduce;
  args.sendbuff = in;
  args.recvbuff = out;
  args.count = call.count;
  args.datatype = call.type;
  args.op = spcclSum;  // Avg is divided at the end, as for the sparse schedules
  const spcclCounters_t before = ctx.counters();
  SPCCL_CHECK(runDenseCollective(ctx, args, ctx.denseAlgorithm()));
  report->bytesSent = ctx.counters().bytesSent - before.bytesSent;
  report->bytesReceived = ctx.counters().bytesReceived - before.bytesReceived;
  *inOutput = !call.cooOutput;
  if (call.cooOutput) {
    const size_t nnz = kernels::countNonZeros(call.type, out, call.count);
    result->positions.resize(nnz);
    result->values.resize(nnz * valueBytes);
    kernels::extractNonZeros(call.type, out, call.count, result->positions.data(),
                             result->values.data(), nnz);
  }
  return spcclSuccess;
}

// For a caller that takes the result as pairs (SparseCall::resultOut): no
// dense output, so the schedules deliver sets, unless the result comes
// dense anyway -- the dense algorithm, and a call whose ranks' pairs
// together would outweigh the dense tensor (the union can be as large) --
// which then goes to the workspace's tensor as to a dense output. Also
// dense from the merges' break-even on (dense_stage.h, M/8 pairs in all):
// there a schedule given a dense output sums into it (AGsparse's
// sumIntoDenseOutput), whose adds of absent positions are not the set
// merges' bits for NaN and -0.0 inputs (a 10 % f32 AGsparse sum with them
// differed), so the pairs could not give the dense output's bits. Either
// way the same algorithm and the same bits. From agreed counts, though
// nothing on the wire depends on it.
void chooseResultForm(SparseCall& call, spcclSparseAlgorithm_t algorithm, uint64_t totalPairs,
                      SparseWorkspace& workspace) {
  const size_t valueBytes = spcclTypeSize(call.type);
  const size_t denseBytes = call.count * valueBytes;
  *call.resultOut = SparseResult{};
  call.denseOutput = nullptr;
  const unsigned __int128 pairBytes =
      static_cast<unsigned __int128>(totalPairs) * (sizeof(uint64_t) + valueBytes);
  if (algorithm != spcclSparseDense && pairBytes < denseBytes &&
      !mergeDensely(totalPairs, call.count))
    return;
  if (workspace.denseResult.size() < denseBytes) workspace.denseResult.resize(denseBytes);
  call.denseOutput = workspace.denseResult.data();
}

std::string describeCosts(const SparseDecision& d) {
  std::string text;
  for (const SparseAlgorithmInfo& a : sparseAlgorithms()) {
    char part[64];
    std::snprintf(part, sizeof(part), "%s%s %.1f us", text.empty() ? "" : ", ", a.name,
                  d.predictedSeconds[a.id] * 1e6);
    text += part;
  }
  return text;
}

// What every rank reported of the tag's previous call: gamma(2^stage) from
// HC's stage sizes, and the call's time; the same on every rank.
void learnFromPreviousCall(const std::vector<SparseCallHeader>& headers, TagProfile* profile) {
  std::vector<int32_t> stages, algorithms;
  std::vector<const double*> gammas;
  std::vector<double> seconds;
  for (const SparseCallHeader& h : headers) {
    stages.push_back(h.mergeStages);
    gammas.push_back(h.stageGamma);
    algorithms.push_back(h.lastAlgorithm);
    seconds.push_back(h.lastSeconds);
  }
  learnStageGammas(profile, stages, gammas);
  learnMeasuredSeconds(profile, algorithms, seconds);
}

}  // namespace

CollSignature signatureOf(const SparseCall& call) {
  return CollSignature{CollType::SparseAllReduce, static_cast<uint8_t>(call.type),
                       static_cast<uint8_t>(call.op), -1, call.count};
}

spcclResult_t runSparseAllReduce(CollContext& ctx, CommState& state, SparseCall& call) {
  const auto start = std::chrono::steady_clock::now();
  const int n = ctx.nranks();
  const uint64_t seq = ctx.seq();
  TagProfile profile = state.planner.load(call.options.tag, call.count);

  // 1. Agree on the call; the first call of a tag also sketches the indices.
  SparseCallHeader mine;
  const bool sketch = call.inputValid && call.options.algorithm == spcclSparseAuto &&
                      profile.stats.calls == 0 && n > 1;
  // Extract once, up front: every schedule but dense needs the non-zeros,
  // and counting them separately would cost another pass over the input.
  // When the tag's last call went dense, only count them (a read of the
  // input, no pairs written) and extract after planning if the plan changed.
  const bool expectDense = !sketch && profile.stats.calls > 0 &&
                           profile.stats.algorithm == spcclSparseDense &&
                           call.denseInput != nullptr;
  if (call.inputValid && expectDense)
    call.nnz = kernels::countNonZeros(call.type, call.denseInput, call.count);
  else if (call.inputValid)
    extractInput(call, state.workspace);
  // The sketch reads pairs that are not on the host yet (pair_source.h)
  // there: a failed fetch is this rank's input error, which the agreement
  // tells the peers.
  spcclResult_t fetched = spcclSuccess;
  if (sketch && call.nonZeroIndices == nullptr && call.pairSource != nullptr) {
    fetched = call.pairSource->fetch(&call.nonZeroIndices, &call.nonZeroValues);
    call.inputValid = fetched == spcclSuccess;
  }
  if (sketch && call.inputValid)
    mine.sketch = sketchIndices(call.nonZeroIndices, call.nnz, state.seed);
  mine.nnz = call.inputValid ? call.nnz : 0;
  mine.tag = call.options.tag;
  mine.algorithm = call.options.algorithm;
  mine.encoding = call.options.encoding;
  mine.partitioner = call.options.partitioner;
  mine.inputValid = call.inputValid ? 1 : 0;
  mine.mergeStages = profile.localStages;
  std::copy_n(profile.localStageGamma, kMaxMergeStages, mine.stageGamma);
  mine.lastAlgorithm = profile.localAlgorithm;
  mine.lastSeconds = profile.localSeconds;
  mine.useMeasuredTimes = knobInt("SPCCL_SPARSE_MEASURED_TIMES") != 0 ? 1 : 0;
  std::vector<SparseCallHeader> headers;
  const spcclResult_t agreed = agreeOnCall(ctx, mine, &headers);
  if (fetched != spcclSuccess) return fetched;  // (its message is this thread's last error)
  SPCCL_CHECK(agreed);
  learnFromPreviousCall(headers, &profile);

  // 2. Plan from agreed values.
  std::vector<uint64_t> rankNnz(n);
  std::vector<OverlapSketch> sketches(n);
  uint64_t total = 0;
  for (int r = 0; r < n; ++r) {
    rankNnz[r] = headers[r].nnz;
    sketches[r] = headers[r].sketch;
    total += rankNnz[r];
  }
  const double meanNnz = static_cast<double>(total) / n;
  SparseCostInput costInput;
  costInput.nranks = n;
  costInput.universe = call.count;
  costInput.valueBytes = spcclTypeSize(call.type);
  costInput.density = call.count ? meanNnz / static_cast<double>(call.count) : 0.0;
  costInput.link = stableLinkModel(ctx.linkModel());
  // The CPU term, agreed once per communicator at its first sparse call
  // (every rank's first, so all take this branch in the same call).
  if (n > 1 && !state.planner.pairSecondsKnown()) {
    double pairSeconds = 0;
    SPCCL_CHECK(agreePairSeconds(ctx, &pairSeconds));
    state.planner.setPairSeconds(pairSeconds);
    SPCCL_INFO(kLogSparse,
               "rank %d: sparse planner's CPU term: %.2f ns per pair of merge work "
               "(SPCCL_SPARSE_CPU_NS_PER_PAIR x ranks per core)",
               ctx.rank(), pairSeconds * 1e9);
  }
  costInput.pairSeconds = state.planner.pairSeconds();
  costInput.allowedEncodings = runOptions(call.options, 0, 0).allowedEncodings;
  costInput.chunkBytes = ctx.chunkBytes();
  const double sketchGamma =
      sketch && meanNnz > 0 ? estimateUnionSize(sketches, rankNnz) / meanNnz : 0.0;
  const GammaEstimate gamma = planningGamma(profile, costInput.density, n, sketchGamma);
  costInput.gamma = gamma.gamma;
  if (profile.learnedGamma > 0 && costInput.density > 0 &&
      (costInput.density > 2 * profile.learnedAtDensity ||
       2 * costInput.density < profile.learnedAtDensity)) {
    SPCCL_INFO(kLogSparse,
               "sparse all-reduce tag %" PRIu64
               ": density drifted from %.3g to %.3g; "
               "gamma, HC's stage gammas and the measured times are re-learned",
               call.options.tag, profile.learnedAtDensity, costInput.density);
    forgetDensityDependent(&profile);
  }
  costInput.stageGamma = std::span<const double>(profile.learnedStageGamma,
                                                 static_cast<size_t>(profile.learnedStages));
  // Measured times only when every rank asked for them (run-to-run
  // determinism is the default: the model's choice depends on agreed data
  // alone, so the same inputs take the same algorithm).
  bool everyRankMeasures = true;
  for (const SparseCallHeader& h : headers) everyRankMeasures &= h.useMeasuredTimes != 0;
  if (everyRankMeasures) costInput.measuredSeconds = profile.measuredSeconds;
  const SparseDecision decision = decideSparseAlgorithm(costInput, call.options.algorithm);

  // 3. Run, then deliver the result in the caller's form. Pairs not on the
  // host yet come here, except where Balanced Parallelism buckets them
  // where they lie (SparseCall::bucketer): it fetches them itself only
  // where it reads them (its dense ranges, a bucketer that could not).
  const bool bucketsWhereTheyLie =
      call.bucketer != nullptr && decision.algorithm == spcclSparseBalancedParallelism;
  if (call.count > 0 && call.nonZeroIndices == nullptr && call.pairSource != nullptr &&
      !bucketsWhereTheyLie)
    SPCCL_CHECK(fetchInsideCall(ctx, *call.pairSource, &call.nonZeroIndices, &call.nonZeroValues));
  if (call.resultOut != nullptr) chooseResultForm(call, decision.algorithm, total, state.workspace);
  SparseRunReport report;
  SparseSet result;
  bool inOutput = false;  // the dense schedule reduced straight into the output
  if (call.count == 0) {
    // Nothing to reduce (every rank agreed on the count).
  } else if (const SparseAlgorithmInfo* chosen = findSparseAlgorithm(decision.algorithm);
             chosen == nullptr) {
    return SPCCL_FAIL(spcclInternalError,
                      "%s: the planner chose algorithm %d, which sparseAlgorithms() lacks",
                      call.name, decision.algorithm);
  } else if (chosen->run == nullptr) {  // dense: no schedule on sets
    SPCCL_CHECK(runDense(ctx, call, &result, &inOutput, &report));
  } else {
    extractInput(call, state.workspace);
    SparseInput in;
    in.indices = call.nonZeroIndices;
    in.values = call.nonZeroValues;
    in.nnz = call.nnz;
    in.universe = call.count;
    in.type = call.type;
    in.rankNnz = rankNnz.data();
    in.workspace = &state.workspace;
    in.sortedResult = call.cooOutput;
    in.denseOutput = call.cooOutput ? nullptr : call.denseOutput;
    in.denseInput = call.denseInput;
    in.bucketer = call.bucketer;
    in.pairSource = call.pairSource;
    SPCCL_CHECK(chosen->run(ctx, in, runOptions(call.options, state.seed, ctx.sparsePieceBytes()),
                            &result, &report));
    inOutput = result.inDenseOutput;
  }
  size_t outputNnz = 0;
  spcclResult_t outcome = spcclSuccess;
  if (inOutput)
    finishDenseResult(call, ctx.kernels(), n, call.denseOutput, result.denseOutputNnz, &outputNnz);
  else
    outcome = deliverResult(call, ctx.kernels(), n, &result, &outputNnz);
  if (call.resultOut != nullptr) call.resultOut->dense = call.denseOutput;

  // 4. Learn and record.
  learnGamma(&profile, costInput.density, meanNnz, outputNnz);
  recordLocalStages(&profile, decision.algorithm, report, meanNnz);
  SparseCallStats& s = profile.stats;
  s.calls += 1;
  s.algorithm = decision.algorithm;
  const char* why = call.options.algorithm != spcclSparseAuto ? "by the options"
                    : decision.denseWithinMargin ? "sparse gains under the CPU model's error"
                    : decision.measuredMatters   ? "cheapest of the cost model and measured times"
                    : costInput.pairSeconds > 0  ? "cheapest in the cost model (links and CPU)"
                                                 : "cheapest in the alpha-beta model (links only)";
  char reason[160];
  std::snprintf(reason, sizeof(reason), "%s: %s (d %.3g, gamma %.3g %s)",
                call.options.algorithm == spcclSparseAuto ? "auto" : "requested", why,
                costInput.density, gamma.gamma, gamma.source);
  s.reason = reason;
  ctx.noteChoice(sparseAlgorithmName(decision.algorithm), reason);
  for (int a = 0; a < spcclSparseNumAlgorithms; ++a)
    s.predictedSeconds[a] = decision.predictedSeconds[a];
  s.density = costInput.density;
  s.gamma = gamma.gamma;
  s.pushImbalance = report.pushImbalance;
  s.pullImbalance = report.pullImbalance;
  s.bytesSent = report.bytesSent;
  s.bytesReceived = report.bytesReceived;
  s.predictedBytesSent = static_cast<uint64_t>(decision.predictedBytesSent);
  s.measuredSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  recordLocalSeconds(&profile, decision.algorithm, s.measuredSeconds, s.calls == 1);
  state.planner.store(call.options.tag, call.count, profile);
  SPCCL_INFO(kLogSparse,
             "sparse all-reduce #%" PRIu64 " tag %" PRIu64 " count %zu nnz %" PRIu64
             " on %d ranks: %s, %s; predicted %s; measured %.1f us, sent %" PRIu64
             " bytes (predicted %" PRIu64 "), output nnz %zu, imbalance push %.2f pull %.2f",
             seq, call.options.tag, call.count, total, n, sparseAlgorithmName(decision.algorithm),
             reason, describeCosts(decision).c_str(), s.measuredSeconds * 1e6, s.bytesSent,
             s.predictedBytesSent, outputNnz, s.pushImbalance, s.pullImbalance);
  return outcome;
}

}  // namespace spccl::sparse

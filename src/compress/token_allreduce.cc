#include "compress/token_allreduce.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "base/log.h"
#include "coll/collective.h"
#include "coll/schedule_support.h"
#include "coll/small_allgather.h"
#include "compress/configuration_agreement.h"
#include "compress/schedule_parts.h"
#include "compress/schedule_table.h"
#include "compress/token_agreement.h"
#include "compress/token_rows.h"
#include "compress/token_selection.h"

namespace spccl::compress {
namespace {

// Scores travel by all-gather, not all-reduce: summing every rank's scores
// in rank order gives the same bits on every rank whatever the dense
// algorithm would do, hence the same mask. (n-1)*tokens*4 bytes per rank,
// small next to the rows (AccTFM section 4.3.1: "negligible").
spcclResult_t globalScoreMask(CollContext& ctx, const TokenCall& call, unsigned char* mask) {
  std::vector<float> sum(call.tokens);
  if (call.tokens > 0) {
    char* all = nullptr;
    SPCCL_CHECK(acquireScratch(ctx, call.tokens * sizeof(float) * static_cast<size_t>(ctx.nranks()),
                               kScratchTokenScores, &all));
    SPCCL_CHECK(allGatherSmall(ctx, call.scores, call.tokens * sizeof(float), all));
    sumScoresInRankOrder(reinterpret_cast<const float*>(all), ctx.nranks(), call.tokens,
                         sum.data());
  }
  selectTopTokens(sum.data(), call.tokens, call.keep, mask);
  return spcclSuccess;
}

// The packed kept rows all-reduced in place: a compressed schedule on them
// as one tensor of rows*hidden elements, or the dense all-reduce.
spcclResult_t reducePackedRows(CollContext& ctx, const TokenCall& call, void* packed,
                               float* packedResidual, size_t count) {
  if (call.compressed) {
    CompressedCall rows = call.compression;
    rows.sendbuff = packed;
    rows.recvbuff = packed;
    rows.count = count;
    rows.residual = packedResidual;
    return runCompressSchedule(ctx, rows);
  }
  CollArgs args;
  args.type = CollType::AllReduce;
  args.sendbuff = packed;
  args.recvbuff = packed;
  args.count = count;
  args.datatype = call.type;
  args.op = call.op;
  return runDenseCollective(ctx, args, ctx.denseAlgorithm());
}

}  // namespace

CollSignature signatureOf(const TokenCall& call) {
  return CollSignature{CollType::CompressedAllReduce, static_cast<uint8_t>(call.type),
                       static_cast<uint8_t>(call.op), -1, call.count()};
}

spcclResult_t runTokenAllReduce(CollContext& ctx, const TokenCall& call) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t seq = ctx.seq();
  const uint64_t sentBefore = ctx.counters().bytesSent;

  std::vector<unsigned char> mask(call.tokens);
  if (call.isTopk()) {
    SPCCL_CHECK(agreeOnTokenCall(ctx, call, nullptr));
    SPCCL_CHECK(globalScoreMask(ctx, call, mask.data()));
  } else {
    for (size_t t = 0; t < call.tokens; ++t) mask[t] = call.mask[t] != 0;
    SPCCL_CHECK(agreeOnTokenCall(ctx, call, mask.data()));
  }
  if (call.maskOut != nullptr && call.tokens > 0)
    std::memcpy(call.maskOut, mask.data(), call.tokens);

  const std::vector<size_t> rows = keptTokens(mask.data(), call.tokens);
  const size_t rowBytes = call.hidden * spcclTypeSize(call.type);
  const size_t count = rows.size() * call.hidden;
  float* residual = call.compressed ? call.compression.residual : nullptr;
  // f32 rows compressed without error feedback are read and written where
  // they lie (CompressedCall::rows): no packing, no unpacking. Rows shorter
  // than a cache line are packed: there the codec's bookkeeping per row
  // costs more than the copy (1.6x the packed path's CPU at hidden 1, 1.3x
  // at 4, even at 16, less from there on; docs/perf/compressed_cpu.md).
  constexpr size_t kMinInPlaceHidden = 16;
  const bool inPlace = call.mover == nullptr && call.compressed && call.type == spcclFloat32 &&
                       residual == nullptr && ctx.nranks() > 1 && rows.size() < call.tokens &&
                       call.hidden >= kMinInPlaceHidden;
  if (count > 0 && inPlace) {
    CompressedCall onRows = call.compression;
    onRows.sendbuff = call.buff;
    onRows.recvbuff = call.buff;
    onRows.count = count;
    onRows.rows = rows.data();
    onRows.hidden = call.hidden;
    // The pruned rows zeroed as the kept ones are written: one pass over
    // the output in row order instead of a second one over the pruned rows.
    if (call.prunePolicy == spcclPruneZero) onRows.zeroPrunedOf = call.tokens;
    SPCCL_CHECK(runCompressSchedule(ctx, onRows));
  } else if (count > 0 && call.mover != nullptr) {
    // The mover packs them where the CPU reaches them (a device tensor's
    // kept rows only, and the residual's); the all-reduce is the host
    // tensor's below, error feedback included.
    void* packed = nullptr;
    float* packedResidual = nullptr;
    SPCCL_CHECK(call.mover->pack(rows, &packed, &packedResidual));
    SPCCL_CHECK(reducePackedRows(ctx, call, packed, packedResidual, count));
  } else if (count > 0) {
    // Every row kept: the tensor is its own packing.
    const bool all = rows.size() == call.tokens;
    void* packed = call.buff;
    float* packedResidual = residual;
    if (!all) {
      char* bytes = nullptr;
      SPCCL_CHECK(acquireScratch(ctx, count * spcclTypeSize(call.type), kScratchTokenRows, &bytes));
      packed = bytes;
      gatherRows(call.buff, rows, rowBytes, packed);
      if (residual != nullptr) {
        SPCCL_CHECK(acquireScratch(ctx, count * sizeof(float), kScratchTokenResidual, &bytes));
        packedResidual = reinterpret_cast<float*>(bytes);
        gatherRows(residual, rows, call.hidden * sizeof(float), packedResidual);
      }
    }
    SPCCL_CHECK(reducePackedRows(ctx, call, packed, packedResidual, count));
    if (!all) {
      scatterRows(packed, rows, rowBytes, call.buff);
      if (residual != nullptr)
        scatterRows(packedResidual, rows, call.hidden * sizeof(float), residual);
    }
  }
  if (call.mover != nullptr)
    SPCCL_CHECK(call.mover->unpack(
        count > 0 ? std::span<const size_t>(rows) : std::span<const size_t>(), mask.data()));
  else if (count == 0 || !inPlace)
    applyPrunePolicy(call.prunePolicy, mask.data(), call.tokens, rowBytes, call.buff);
  if (ctx.explainsChoice()) {
    char reason[160];
    std::snprintf(
        reason, sizeof(reason), "%zu of %zu tokens kept; rows through %s", rows.size(), call.tokens,
        call.compressed ? compressScheduleName(call.compression.schedule) : "the dense all-reduce");
    ctx.noteChoice(call.isTopk() ? "token_topk" : "token_mask", reason);
  }

  SPCCL_INFO(
      kLogCompress,
      "%s #%" PRIu64
      ": %zu of %zu tokens x %zu %s %s on %d ranks, %s, pruned rows %s; sent "
      "%" PRIu64 " bytes in %.1f us",
      call.name, seq, rows.size(), call.tokens, call.hidden, spcclTypeName(call.type),
      spcclOpName(call.op), ctx.nranks(),
      call.compressed ? ConfigurationHeader::of(call.compression).describe().c_str() : "dense",
      call.prunePolicy == spcclPruneZero ? "zeroed" : "kept local",
      ctx.counters().bytesSent - sentBefore,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6);
  return spcclSuccess;
}

}  // namespace spccl::compress

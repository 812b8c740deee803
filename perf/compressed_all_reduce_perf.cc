// compressed_all_reduce_perf: spcclCompressedAllReduce beside spcclAllReduce
// on the same Gaussian inputs, in nccl-tests' style (docs/algorithms.md 3,
// docs/benchmarking.md). Per size: both times and the speed-up, the compression
// ratio, bytes on the wire per rank against the schedule's formula, and
// (-c 1) the error against the exact sum: max |error|, RMSE, relative
// error and #wrong = elements beyond the documented bound
// (docs/compressed.md), and the CPU time per call of both (where ranks
// share cores, it bounds the speed-up more than the link). The codec's
// throughput per core is measured on a one-rank communicator (one quantize
// + one dequantize per element).
//
// Token top-k mode (-k FRACTION, -H hidden): the tensor is [tokens x
// hidden], each rank scores its tokens (Gaussian), and
// spcclTokenTopkAllReduce keeps FRACTION of the tokens (compressed with the
// flags' cfg, pruned rows zeroed) against the dense all-reduce of the whole
// tensor. The error columns cover the kept rows. The call is in place, so
// every iteration first restores the input (a memcpy); that copy is timed
// on its own and subtracted.
//
// Own flags: -m piecewise|linear  -q bits  -B block  -S two-shot|ring
//            -k,--topk FRACTION  -H,--hidden N
#include <libgen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/compressed_check.h"
#include "common/compressed_flags.h"
#include "common/element_codec.h"
#include "common/perf_options.h"
#include "common/perf_run.h"
#include "common/perf_session.h"
#include "common/perf_table.h"
#include "common/sweep_progress.h"
#include "common/timed_loop.h"

namespace {

using namespace spccl::perf;

void fillGaussian(spcclDataType_t type, size_t count, int rank, std::vector<unsigned char>* out) {
  const ElementCodec& codec = *elementCodecFor(type);
  out->resize(count * spcclTypeSize(type));
  std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(rank));
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) codec.store(out->data(), i, gauss(rng));
}

std::vector<float> gaussianScores(size_t tokens, int rank) {
  std::mt19937_64 rng(0x5c0e + static_cast<uint64_t>(rank));
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> scores(tokens);
  for (float& v : scores) v = gauss(rng);
  return scores;
}

std::vector<size_t> keptRowsOf(const std::vector<unsigned char>& mask) {
  std::vector<size_t> rows;
  for (size_t t = 0; t < mask.size(); ++t)
    if (mask[t]) rows.push_back(t);
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = basename(argv[0]);
  PerfOptions options;
  CompressedFlags flags;
  const OptionExtension extension = compressedExtension(&flags);
  if (int exitCode = 0; !startPerfMain(argc, argv, &options, &extension, &exitCode))
    return exitCode;
  PerfSession session;
  const bool printing = session.rank() == 0;
  const int n = session.nranks();
  spcclComm_t solo = nullptr;  // this rank alone: the codec's throughput
  session.require(spcclCommSplit(session.comm(), session.rank(), 0, &solo, nullptr),
                  "spcclCommSplit");
  const std::vector<std::string> rankDescriptions = session.rankDescriptions();  // collective
  if (printing) {
    printPreamble(program, options, n, rankDescriptions);
    std::printf("# compression: %s %d-bit, block %zu, %s; bound: docs/compressed.md\n",
                spcclCodecName(flags.codec), flags.bits, flags.block,
                spcclCompressScheduleName(flags.schedule));
    if (flags.topk())
      std::printf(
          "# token top-k: keep %.3g of the tokens, hidden %zu, pruned rows zeroed; errors over the "
          "kept rows; comp_us excludes restoring the input\n",
          flags.topkFraction, flags.hidden);
    std::printf(
        "#\n# %10s %11s %8s %5s | %9s %9s %7s | %9s %9s | %6s %12s %12s %6s | %9s %9s %9s %6s | "
        "%8s%s\n",
        "size", "count", "type", "redop", "dense_us", "comp_us", "speedup", "dense_cpu", "comp_cpu",
        "ratio", "wire_B/rank", "formula_B", "wire%", "max_err", "rmse", "rel_err", "#wrong",
        "codec_GB/s", flags.topk() ? " |   tokens     keep" : "");
  }
  const spcclCompression cfg = flags.cfg();
  int failed = 0;
  std::vector<unsigned char> input, output;
  SweepProgress progress(sweepSteps(options), printing && progressWanted(options));
  for (spcclDataType_t type : options.types) {
    for (size_t requested : messageSizes(options)) {
      size_t count = requested / spcclTypeSize(type);
      // Top-k mode: whole rows only.
      const size_t tokens = flags.topk() ? count / flags.hidden : 0;
      const size_t keep =
          static_cast<size_t>(std::llround(flags.topkFraction * static_cast<double>(tokens)));
      if (flags.topk()) count = tokens * flags.hidden;
      const size_t size = count * spcclTypeSize(type);
      fillGaussian(type, count, session.rank(), &input);
      output.assign(input.size(), 0);
      const std::vector<float> scores = gaussianScores(tokens, session.rank());
      std::vector<unsigned char> mask(tokens);
      for (spcclRedOp_t op : options.ops) {
        auto dense = [&] {
          session.require(
              spcclAllReduce(input.data(), output.data(), count, type, op, session.comm(), nullptr),
              "spcclAllReduce");
        };
        auto restore = [&] {
          if (size > 0) std::memcpy(output.data(), input.data(), size);
        };
        auto compressed = [&] {
          if (!flags.topk()) {
            session.require(spcclCompressedAllReduce(input.data(), output.data(), count, type, op,
                                                     &cfg, session.comm(), nullptr),
                            "spcclCompressedAllReduce");
            return;
          }
          restore();
          session.require(spcclTokenTopkAllReduce(
                              output.data(), scores.data(), tokens, flags.hidden, type, op, keep,
                              &cfg, spcclPruneZero, mask.data(), session.comm(), nullptr),
                          "spcclTokenTopkAllReduce");
        };
        auto codecOnly = [&] {
          session.require(spcclCompressedAllReduce(input.data(), output.data(), count, type, op,
                                                   &cfg, solo, nullptr),
                          "spcclCompressedAllReduce (one rank)");
        };
        for (int w = 0; w < options.warmupIterations; ++w) {
          dense();
          compressed();
        }
        ModeResult denseResult, compressedResult, codecResult, restoreResult;
        timeIterations(session, options.iterations, dense, &denseResult);
        timeIterations(session, options.iterations, codecOnly, &codecResult);
        if (flags.topk()) timeIterations(session, options.iterations, restore, &restoreResult);
        timeIterations(session, options.iterations, compressed, &compressedResult);
        const double compressedSeconds =
            compressedResult.averageSeconds - restoreResult.averageSeconds;
        const double compressedCpuSeconds =
            compressedResult.cpuSecondsPerIteration - restoreResult.cpuSecondsPerIteration;
        ErrorStats e;
        e.wrong = -1;
        if (options.check) {
          if (!flags.topk()) {
            e = checkAgainstExact(session, flags, type, op, input, output, count, nullptr);
          } else {
            compressed();  // the output of one call on the original input
            const std::vector<size_t> kept = keptRowsOf(mask);
            e = checkAgainstExact(session, flags, type, op, input, output, count, &kept);
          }
        }
        std::vector<double> wrong{static_cast<double>(e.wrong), e.maxAbs};
        session.maxOverRanks(&wrong);
        failed += wrong[0] > 0;
        const double formula = flags.topk() ? topkFormulaBytes(flags, tokens, keep, n)
                                            : compressedFormulaBytes(flags, count, n);
        const double wire = compressedResult.bytesSentPerIteration;
        if (printing) {
          std::printf(
              "  %10zu %11zu %8s %5s | %9s %9s %7.2f | %9s %9s | %6.2f %12.0f %12.0f %6.1f | %9.3g "
              "%9.3g %9.3g %6s | %8.2f",
              size, count, spcclTypeName(type), spcclOpName(op),
              formatMicroseconds(denseResult.averageSeconds).c_str(),
              formatMicroseconds(compressedSeconds).c_str(),
              denseResult.averageSeconds / compressedSeconds,
              formatMicroseconds(denseResult.cpuSecondsPerIteration).c_str(),
              formatMicroseconds(compressedCpuSeconds).c_str(),
              denseResult.bytesSentPerIteration / std::max(1.0, wire), wire, formula,
              100.0 * wire / std::max(1.0, formula), wrong[1],
              std::sqrt(e.sumSquares / std::max<size_t>(1, e.checked)),
              std::sqrt(e.sumSquares / std::max(1e-300, e.sumSquaresExact)),
              formatWrong(static_cast<int64_t>(wrong[0])).c_str(),
              size / codecResult.averageSeconds / 1e9);
          if (flags.topk()) std::printf(" | %8zu %8zu", tokens, keep);
          std::printf("\n");
        }
        progress.stepDone(std::to_string(size) + " bytes " + spcclTypeName(type) + " " +
                          spcclOpName(op));
      }
    }
  }
  if (printing)
    std::printf(
        "# Out of bounds values : %d %s\n# codec_GB/s: input bytes per second through one "
        "quantize + one dequantize on one core (a one-rank call)\n# dense_cpu, comp_cpu: process "
        "CPU time per call in us (all threads, slowest rank)\n",
        failed, failed ? "FAILED" : "OK");
  spcclCommDestroy(solo);
  return finishPerfMain(session, failed);
}

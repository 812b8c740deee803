// compressed_all_reduce_perf: spcclCompressedAllReduce beside spcclAllReduce
// on the same Gaussian inputs, in nccl-tests' style (SPEC.md section 3,
// BENCHMARKS.md). Per size: both times and the speed-up, the compression
// ratio, bytes on the wire per rank against the schedule's formula, and
// (-c 1) the error against the exact sum: max |error|, RMSE, relative
// error and #wrong = elements beyond the documented bound
// (docs/compressed.md). The codec's throughput per core is measured on a
// one-rank communicator (one quantize + one dequantize per element).
//
// Own flags: -m piecewise|linear  -q bits  -B block  -S two-shot|ring
#include <libgen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/element_codec.h"
#include "common/perf_options.h"
#include "common/perf_session.h"
#include "common/perf_table.h"
#include "common/timed_loop.h"

namespace {

using namespace spccl::perf;

struct CompressedFlags {
  spcclCodec_t codec = spcclCodecPiecewise;
  int bits = 4;
  size_t block = SPCCL_COMPRESSION_DEFAULT_BLOCK;
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
};

OptionExtension compressedExtension(CompressedFlags* flags) {
  OptionExtension e;
  e.shortOptions = "m:q:B:S:";
  e.longOptions = {{"codec", required_argument, nullptr, 'm'},
                   {"bits", required_argument, nullptr, 'q'},
                   {"block", required_argument, nullptr, 'B'},
                   {"schedule", required_argument, nullptr, 'S'}};
  e.usage =
      "\t[-m,--codec <piecewise|linear>]\n\t[-q,--bits <2..8, sign included>]\n"
      "\t[-B,--block <elements per scale>]\n\t[-S,--schedule <two-shot|ring>]\n";
  e.apply = [flags](int flag, const char* value) {
    const std::string v = value;
    switch (flag) {
      case 'm':
        if (v != "piecewise" && v != "linear") break;
        flags->codec = v == "linear" ? spcclCodecLinear : spcclCodecPiecewise;
        return true;
      case 'q':
        flags->bits = std::atoi(value);
        if (flags->bits < 2 || flags->bits > 8) break;
        return true;
      case 'B':
        if (!parseByteSize(value, &flags->block) || flags->block == 0) break;
        return true;
      case 'S':
        if (v != "two-shot" && v != "ring") break;
        flags->schedule = v == "ring" ? spcclCompressRing : spcclCompressTwoShot;
        return true;
      default:
        return false;
    }
    std::fprintf(stderr, "invalid value '%s' for -%c\n", value, flag);
    return false;
  };
  e.validate = [](const PerfOptions& options) {
    for (spcclDataType_t t : options.types)
      if (t != spcclFloat32 && t != spcclFloat16 && t != spcclBfloat16) {
        std::fprintf(stderr, "-d: the compressed all-reduce takes float, half and bfloat16\n");
        return false;
      }
    for (spcclRedOp_t op : options.ops)
      if (op != spcclSum && op != spcclAvg) {
        std::fprintf(stderr, "-o: the compressed all-reduce takes sum and avg\n");
        return false;
      }
    return true;
  };
  return e;
}

double halfStep(const CompressedFlags& f) {
  const int n = f.bits - 1;
  return f.codec == spcclCodecPiecewise ? 0.5 / n : 0.5 / ((1 << n) - 1);
}

// Bytes one rank sends, from the schedule (compressed_schedules.h): 2 (n-1)
// chunk encodings (on average over ranks), plus the cfg agreement's (n-1)
// 24-byte headers. Chunks are whole blocks, so per-rank figures vary by at
// most one block's encoding.
double formulaBytes(const CompressedFlags& f, size_t count, int n) {
  const double blocks = std::ceil(static_cast<double>(count) / f.block);
  const double encoded = blocks * 4 + std::ceil(count * f.bits / 8.0);
  return 2.0 * (n - 1) / n * encoded + 24.0 * (n - 1);
}

struct ErrorStats {
  double maxAbs = 0, sumSquares = 0, sumSquaresExact = 0;
  int64_t wrong = 0;
};

// The exact sum (f64 all-reduce of the inputs) and the bound's A_b (f64
// all-reduce of each rank's block maxima), then every element checked.
ErrorStats checkAgainstExact(const PerfSession& s, const CompressedFlags& f, spcclDataType_t type,
                             spcclRedOp_t op, const std::vector<unsigned char>& input,
                             const std::vector<unsigned char>& output, size_t count) {
  const ElementCodec& codec = *elementCodecFor(type);
  std::vector<double> exact(count), blockSums((count + f.block - 1) / f.block, 0.0);
  for (size_t i = 0; i < count; ++i) {
    exact[i] = codec.load(input.data(), i);
    blockSums[i / f.block] = std::max(blockSums[i / f.block], std::fabs(exact[i]));
  }
  s.require(spcclAllReduce(exact.data(), exact.data(), count, spcclFloat64, spcclSum, s.comm(), nullptr),
            "spcclAllReduce (f64 reference)");
  s.require(spcclAllReduce(blockSums.data(), blockSums.data(), blockSums.size(), spcclFloat64, spcclSum,
                           s.comm(), nullptr),
            "spcclAllReduce (block maxima)");
  const int n = s.nranks();
  const double h = halfStep(f), divisor = op == spcclAvg ? n : 1;
  ErrorStats e;
  for (size_t i = 0; i < count; ++i) {
    const double want = exact[i] / divisor, got = codec.load(output.data(), i);
    const double a = blockSums[i / f.block];
    const double q = f.schedule == spcclCompressTwoShot ? h * a * (2 + h) : a * (std::pow(1 + h, n) - 1);
    const double bound = q / divisor + 1e-5 * a * n + 2 * codec.epsilon * std::fabs(got);
    const double err = std::fabs(got - want);
    e.maxAbs = std::max(e.maxAbs, err);
    e.sumSquares += err * err;
    e.sumSquaresExact += want * want;
    if (!(err <= bound)) ++e.wrong;
  }
  return e;
}

void fillGaussian(spcclDataType_t type, size_t count, int rank, std::vector<unsigned char>* out) {
  const ElementCodec& codec = *elementCodecFor(type);
  out->resize(count * spcclTypeSize(type));
  std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(rank));
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) codec.store(out->data(), i, gauss(rng));
}

}  // namespace

int main(int argc, char** argv) {
  setlinebuf(stdout);
  const char* program = basename(argv[0]);
  PerfOptions options;
  CompressedFlags flags;
  const OptionExtension extension = compressedExtension(&flags);
  switch (parsePerfOptions(argc, argv, &options, &extension)) {
    case ParseOutcome::kExitSuccess: return 0;
    case ParseOutcome::kExitFailure: return kExitError;
    case ParseOutcome::kRun: break;
  }
  PerfSession session;
  const bool printing = session.rank() == 0;
  const int n = session.nranks();
  spcclComm_t solo = nullptr;  // this rank alone: the codec's throughput
  session.require(spcclCommSplit(session.comm(), session.rank(), 0, &solo, nullptr), "spcclCommSplit");
  const std::vector<std::string> rankDescriptions = session.rankDescriptions();  // collective
  if (printing) {
    printPreamble(program, options, n, rankDescriptions);
    std::printf("# compression: %s %d-bit, block %zu, %s; bound: docs/compressed.md\n#\n",
                flags.codec == spcclCodecLinear ? "linear" : "piecewise", flags.bits, flags.block,
                flags.schedule == spcclCompressRing ? "ring" : "two-shot");
    std::printf("# %10s %11s %8s %5s | %9s %9s %7s | %6s %12s %12s %6s | %9s %9s %9s %6s | %8s\n",
                "size", "count", "type", "redop", "dense_us", "comp_us", "speedup", "ratio",
                "wire_B/rank", "formula_B", "wire%", "max_err", "rmse", "rel_err", "#wrong",
                "codec_GB/s");
  }
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.codec = flags.codec;
  cfg.bits = flags.bits;
  cfg.blockSize = flags.block;
  cfg.schedule = flags.schedule;
  int failed = 0;
  std::vector<unsigned char> input, output;
  for (spcclDataType_t type : options.types) {
    for (size_t size : messageSizes(options)) {
      const size_t count = size / spcclTypeSize(type);
      fillGaussian(type, count, session.rank(), &input);
      output.assign(input.size(), 0);
      for (spcclRedOp_t op : options.ops) {
        auto dense = [&] {
          session.require(spcclAllReduce(input.data(), output.data(), count, type, op, session.comm(), nullptr),
                          "spcclAllReduce");
        };
        auto compressed = [&] {
          session.require(spcclCompressedAllReduce(input.data(), output.data(), count, type, op, &cfg,
                                                   session.comm(), nullptr),
                          "spcclCompressedAllReduce");
        };
        auto codecOnly = [&] {
          session.require(spcclCompressedAllReduce(input.data(), output.data(), count, type, op, &cfg,
                                                   solo, nullptr),
                          "spcclCompressedAllReduce (one rank)");
        };
        for (int w = 0; w < options.warmupIterations; ++w) {
          dense();
          compressed();
        }
        ModeResult denseResult, compressedResult, codecResult;
        timeIterations(session, options.iterations, dense, &denseResult);
        timeIterations(session, options.iterations, codecOnly, &codecResult);
        timeIterations(session, options.iterations, compressed, &compressedResult);
        ErrorStats e;
        e.wrong = -1;
        if (options.check) e = checkAgainstExact(session, flags, type, op, input, output, count);
        std::vector<double> wrong{static_cast<double>(e.wrong), e.maxAbs};
        session.maxOverRanks(&wrong);
        failed += wrong[0] > 0;
        const double formula = formulaBytes(flags, count, n);
        const double wire = compressedResult.bytesSentPerIteration;
        if (printing) {
          std::printf("  %10zu %11zu %8s %5s | %9s %9s %7.2f | %6.2f %12.0f %12.0f %6.1f | %9.3g %9.3g %9.3g %6s | %8.2f\n",
                      size, count, spcclTypeName(type), spcclOpName(op),
                      formatMicroseconds(denseResult.averageSeconds).c_str(),
                      formatMicroseconds(compressedResult.averageSeconds).c_str(),
                      denseResult.averageSeconds / compressedResult.averageSeconds,
                      denseResult.bytesSentPerIteration / std::max(1.0, wire), wire, formula,
                      100.0 * wire / formula, wrong[1],
                      std::sqrt(e.sumSquares / std::max<size_t>(1, count)),
                      std::sqrt(e.sumSquares / std::max(1e-300, e.sumSquaresExact)),
                      formatWrong(static_cast<int64_t>(wrong[0])).c_str(),
                      size / codecResult.averageSeconds / 1e9);
        }
      }
    }
  }
  if (printing)
    std::printf("# Out of bounds values : %d %s\n# codec_GB/s: input bytes per second through one "
                "quantize + one dequantize on one core (a one-rank call)\n",
                failed, failed ? "FAILED" : "OK");
  spcclCommDestroy(solo);
  session.barrier();
  return failed ? 1 : 0;
}

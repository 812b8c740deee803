#include "common/compressed_flags.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/enum_names.h"

namespace spccl::perf {

spcclCompression CompressedFlags::cfg() const {
  spcclCompression c = SPCCL_COMPRESSION_INITIALIZER;
  c.codec = codec;
  c.bits = bits;
  c.blockSize = block;
  c.schedule = schedule;
  return c;
}

OptionExtension compressedExtension(CompressedFlags* flags) {
  OptionExtension e;
  e.shortOptions = "m:q:B:S:k:H:";
  e.longOptions = {
      {"codec", required_argument, nullptr, 'm'}, {"bits", required_argument, nullptr, 'q'},
      {"block", required_argument, nullptr, 'B'}, {"schedule", required_argument, nullptr, 'S'},
      {"topk", required_argument, nullptr, 'k'},  {"hidden", required_argument, nullptr, 'H'}};
  e.usage = usageLine("-m,--codec", spcclCodecName, spcclNumCodecs, "|") +
            "\t[-q,--bits <2..8, sign included>]\n"
            "\t[-B,--block <elements per scale>]\n" +
            usageLine("-S,--schedule", spcclCompressScheduleName, spcclNumCompressSchedules, "|") +
            "\t[-k,--topk <fraction of tokens kept, 0..1: token top-k mode>]\n"
            "\t[-H,--hidden <elements per token row, top-k mode; default 1024>]\n";
  e.apply = [flags](int flag, const char* value) {
    char* end = nullptr;
    switch (flag) {
      case 'm':
        if (!parseEnumName(spcclCodecName, spcclNumCodecs, value, &flags->codec)) break;
        return true;
      case 'q':
        flags->bits = std::atoi(value);
        if (flags->bits < 2 || flags->bits > 8) break;
        return true;
      case 'B':
        if (!parseByteSize(value, &flags->block) || flags->block == 0) break;
        return true;
      case 'S':
        if (!parseEnumName(spcclCompressScheduleName, spcclNumCompressSchedules, value,
                           &flags->schedule))
          break;
        return true;
      case 'k':
        flags->topkFraction = std::strtod(value, &end);
        if (end == value || *end != '\0' || !(flags->topkFraction >= 0 && flags->topkFraction <= 1))
          break;
        return true;
      case 'H':
        if (!parseByteSize(value, &flags->hidden) || flags->hidden == 0) break;
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

double encodedBytes(const CompressedFlags& f, size_t count) {
  const double blocks = std::ceil(static_cast<double>(count) / f.block);
  return blocks * 4 + std::ceil(count * f.bits / 8.0);
}

double compressedFormulaBytes(const CompressedFlags& f, size_t count, int n) {
  return 2.0 * (n - 1) / n * encodedBytes(f, count) + 24.0 * (n - 1);
}

double topkFormulaBytes(const CompressedFlags& f, size_t tokens, size_t keep, int n) {
  if (n == 1) return 0;
  const double rows = keep == 0 ? 0 : 2.0 * (n - 1) / n * encodedBytes(f, keep * f.hidden);
  return rows + (n - 1) * (4.0 * tokens + 64.0);
}

}  // namespace spccl::perf

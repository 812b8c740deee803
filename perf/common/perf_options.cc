#include "common/perf_options.h"

#include <getopt.h>
#include <libgen.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spccl::perf {

namespace {

// nccl-tests' order for "-o all".
constexpr spcclRedOp_t kAllOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};

// Long-only flags of the shared options (the binaries' own start at 256).
constexpr int kDeviceFlag = 200;

void printUsage(const char* program, const OptionExtension* extension) {
  std::printf(
      "USAGE: %s\n"
      "\t[-b,--minbytes <min size in bytes, K/M/G suffixes>]\n"
      "\t[-e,--maxbytes <max size in bytes>]\n"
      "\t[-i,--stepbytes <increment size>]\n"
      "\t[-f,--stepfactor <increment factor>]\n"
      "\t[-n,--iters <iteration count, default 20>]\n"
      "\t[-w,--warmup_iters <warmup iteration count, default 5>]\n"
      "\t[-c,--check <0/1, default 1>]\n"
      "\t[-o,--op <sum/prod/min/max/avg/all>]\n"
      "\t[-d,--datatype <int8/uint8/int32/uint32/int64/uint64/half/float/double/bfloat16/all>]\n"
      "\t[-r,--root <root rank, default 0>]\n"
      "\t[-z,--blocking <0/1> (accepted; host calls always block)]\n"
      "\t[-J,--json <file> write every result as JSON (rank 0)]\n"
      "\t[-p,--progress <0/1> a line per size with an ETA on stderr (rank 0);\n"
      "\t  default 1 when stderr is a terminal, else 0]\n"
      "%s"
      "\t[--device] buffers in CUDA device memory, every call on one stream\n"
      "\t  (staged through pinned host memory by spccl; needs the CUDA driver)\n"
      "\t[-h,--help]\n"
      "Launch with spcclrun -n N (or any launcher spcclCommInitFromEnv reads).\n"
      "Warm-up runs -w iterations at the largest and the smallest size per type\n"
      "and op; every size then runs once untimed, -n times timed, and once more\n"
      "on fresh inputs for the check.\n",
      program, extension != nullptr ? extension->usage.c_str() : "");
}

bool parseInt(const char* text, long minimum, long* value) {
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || parsed < minimum) return false;
  *value = parsed;
  return true;
}

bool parseOps(const char* text, std::vector<spcclRedOp_t>* ops) {
  if (std::strcmp(text, "all") == 0) {
    ops->assign(std::begin(kAllOps), std::end(kAllOps));
    return true;
  }
  for (spcclRedOp_t op : kAllOps) {
    if (std::strcmp(text, spcclOpName(op)) == 0) {
      ops->assign(1, op);
      return true;
    }
  }
  return false;
}

bool parseTypes(const char* text, std::vector<spcclDataType_t>* types) {
  const bool all = std::strcmp(text, "all") == 0;
  types->clear();
  for (int t = 0; t < spcclNumTypes; ++t) {
    const auto type = static_cast<spcclDataType_t>(t);
    if (all || std::strcmp(text, spcclTypeName(type)) == 0) types->push_back(type);
  }
  return !types->empty();
}

bool badValue(const char* option, const char* text) {
  std::fprintf(stderr, "invalid value '%s' for %s\n", text, option);
  return false;
}

// One option; false (after saying why) when its value is invalid.
bool applyOption(int flag, const char* value, PerfOptions* options) {
  long number = 0;
  switch (flag) {
    case 'b':
      return parseByteSize(value, &options->minBytes) || badValue("minbytes", value);
    case 'e':
      return parseByteSize(value, &options->maxBytes) || badValue("maxbytes", value);
    case 'i':
      return parseByteSize(value, &options->stepBytes) || badValue("stepbytes", value);
    case 'f':
      if (!parseInt(value, 1, &number)) return badValue("stepfactor", value);
      options->stepFactor = static_cast<size_t>(number);
      return true;
    case 'n':
      if (!parseInt(value, 1, &number)) return badValue("iters", value);
      options->iterations = static_cast<int>(number);
      return true;
    case 'w':
      if (!parseInt(value, 0, &number)) return badValue("warmup_iters", value);
      options->warmupIterations = static_cast<int>(number);
      return true;
    case 'c':
      if (!parseInt(value, 0, &number)) return badValue("check", value);
      options->check = number != 0;
      return true;
    case 'o':
      return parseOps(value, &options->ops) || badValue("op", value);
    case 'd':
      return parseTypes(value, &options->types) || badValue("datatype", value);
    case 'r':
      if (!parseInt(value, 0, &number)) return badValue("root", value);
      options->root = static_cast<int>(number);
      return true;
    case 'z':
      if (!parseInt(value, 0, &number)) return badValue("blocking", value);
      options->blocking = static_cast<int>(number);
      return true;
    case 'J':
      options->jsonPath = value;
      return true;
    case 'p':
      if (!parseInt(value, 0, &number) || number > 1) return badValue("progress", value);
      options->progress = static_cast<int>(number);
      return true;
    default:
      return false;
  }
}

bool validate(const PerfOptions& options) {
  if (options.minBytes > options.maxBytes) {
    std::fprintf(stderr, "invalid sizes for 'minbytes' and 'maxbytes': %zu > %zu\n",
                 options.minBytes, options.maxBytes);
    return false;
  }
  // Either step would never leave a size of 0 (or the same size) behind.
  if (options.minBytes < options.maxBytes) {
    if (options.stepFactor > 1 && options.minBytes == 0) {
      std::fprintf(stderr, "'minbytes' must be > 0 with a step factor\n");
      return false;
    }
    if (options.stepFactor <= 1 && options.stepBytes == 0) {
      std::fprintf(stderr, "'stepbytes' must be > 0 without a step factor\n");
      return false;
    }
  }
  return true;
}

}  // namespace

bool parseByteSize(const char* text, size_t* bytes) {
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(text, &end);
  if (errno != 0 || end == text || !(number >= 0.0)) return false;
  double unit = 1.0;
  switch (*end) {
    case '\0':
      break;
    case 'K':
    case 'k':
      unit = 1024.0;
      ++end;
      break;
    case 'M':
    case 'm':
      unit = 1024.0 * 1024.0;
      ++end;
      break;
    case 'G':
    case 'g':
      unit = 1024.0 * 1024.0 * 1024.0;
      ++end;
      break;
    default:
      return false;
  }
  if (*end != '\0') return false;
  const double value = number * unit;
  if (value >= 0x1p63) return false;
  *bytes = static_cast<size_t>(std::llround(value));
  return true;
}

ParseOutcome parsePerfOptions(int argc, char** argv, PerfOptions* options,
                              const OptionExtension* extension) {
  std::vector<option> longOptions = {
      {"minbytes", required_argument, nullptr, 'b'},
      {"maxbytes", required_argument, nullptr, 'e'},
      {"stepbytes", required_argument, nullptr, 'i'},
      {"stepfactor", required_argument, nullptr, 'f'},
      {"iters", required_argument, nullptr, 'n'},
      {"warmup_iters", required_argument, nullptr, 'w'},
      {"check", required_argument, nullptr, 'c'},
      {"op", required_argument, nullptr, 'o'},
      {"datatype", required_argument, nullptr, 'd'},
      {"root", required_argument, nullptr, 'r'},
      {"blocking", required_argument, nullptr, 'z'},
      {"json", required_argument, nullptr, 'J'},
      {"progress", required_argument, nullptr, 'p'},
      {"help", no_argument, nullptr, 'h'},
      {"device", no_argument, nullptr, kDeviceFlag},
  };
  std::string shortOptions = "b:e:i:f:n:w:c:o:d:r:z:J:p:h";
  if (extension != nullptr) {
    longOptions.insert(longOptions.end(), extension->longOptions.begin(),
                       extension->longOptions.end());
    shortOptions += extension->shortOptions;
  }
  longOptions.push_back({nullptr, 0, nullptr, 0});
  const char* program = basename(argv[0]);
  optind = 1;
  for (;;) {
    const int flag = getopt_long(argc, argv, shortOptions.c_str(), longOptions.data(), nullptr);
    if (flag == -1) break;
    if (flag == 'h') {
      printUsage(program, extension);
      return ParseOutcome::kExitSuccess;
    }
    if (flag == kDeviceFlag) {
      options->deviceBuffers = true;
      continue;
    }
    // strchr would also find a long-only flag's low byte, or '\0'.
    const bool shared = flag > 0 && flag < 128 && std::strchr("beifnwcodrzJp", flag) != nullptr;
    const bool applied =
        flag != '?' && (shared ? applyOption(flag, optarg, options)
                               : extension != nullptr && extension->apply(flag, optarg));
    if (!applied) {
      std::fprintf(stderr, "%s: see -h for usage\n", program);
      return ParseOutcome::kExitFailure;
    }
  }
  if (optind < argc) {
    std::fprintf(stderr, "%s: unexpected argument '%s'\n", program, argv[optind]);
    return ParseOutcome::kExitFailure;
  }
  if (!validate(*options)) return ParseOutcome::kExitFailure;
  if (extension != nullptr && extension->validate && !extension->validate(*options)) {
    return ParseOutcome::kExitFailure;
  }
  return ParseOutcome::kRun;
}

std::vector<size_t> messageSizes(const PerfOptions& options) {
  std::vector<size_t> sizes;
  for (size_t size = options.minBytes; size <= options.maxBytes;) {
    sizes.push_back(size);
    const size_t next =
        options.stepFactor > 1 ? size * options.stepFactor : size + options.stepBytes;
    if (next <= size) break;  // a zero step or overflow
    size = next;
  }
  return sizes;
}

}  // namespace spccl::perf

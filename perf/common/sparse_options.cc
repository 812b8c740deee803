#include "common/sparse_options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/enum_names.h"

namespace spccl::perf {

namespace {

// Long-only options.
constexpr int kInputFlag = 256;
constexpr int kSeedFlag = 257;
constexpr int kCooFlag = 258;

bool parseFraction(const char* text, double low, bool lowOpen, double* value) {
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(parsed <= 1.0)) return false;
  if (lowOpen ? !(parsed > low) : !(parsed >= low)) return false;
  *value = parsed;
  return true;
}

bool parseUnsigned(const char* text, uint64_t minimum, uint64_t* value) {
  char* end = nullptr;
  errno = 0;
  if (*text == '-') return false;
  const unsigned long long parsed = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || parsed < minimum) return false;
  *value = parsed;
  return true;
}

bool badValue(const char* option, const char* text, const char* expected) {
  std::fprintf(stderr, "invalid value '%s' for %s: expected %s\n", text, option, expected);
  return false;
}

// One of the library's names for an enum (enum_names.h), or a complaint
// that lists them.
template <typename Enum>
bool parseChoice(const char* option, const char* (*nameOf)(Enum), int count, const char* text,
                 Enum* value) {
  return parseEnumName(nameOf, count, text, value) ||
         badValue(option, text, enumNames(nameOf, count, "|").c_str());
}

bool applySparseOption(SparseOptions* options, int flag, const char* value) {
  SparseWorkloadSpec& workload = options->workload;
  uint64_t number = 0;
  switch (flag) {
    case 'D':
      return parseFraction(value, 0.0, /*lowOpen=*/true, &workload.density) ||
             badValue("density", value, "a fraction in (0, 1]");
    case 'O':
      return parseFraction(value, 0.0, /*lowOpen=*/false, &workload.overlap) ||
             badValue("overlap", value, "a fraction in [0, 1]");
    case 'Z': {
      char* end = nullptr;
      const double exponent = std::strtod(value, &end);
      if (end == value || *end != '\0' || !(exponent >= 0.0) || !std::isfinite(exponent)) {
        return badValue("zipf", value, "an exponent >= 0 (0: uniform)");
      }
      workload.zipfExponent = exponent;
      return true;
    }
    case 'H':
      if (!parseUnsigned(value, 1, &number)) return badValue("row-width", value, "an integer >= 1");
      workload.rowWidth = number;
      return true;
    case 'a':
      return parseChoice("algorithm", spcclSparseAlgorithmName, spcclSparseNumAlgorithms, value,
                         &options->algorithm);
    case 'E':
      return parseChoice("encoding", spcclSparseEncodingName, spcclNumEncodings, value,
                         &options->encoding);
    case 'P':
      return parseChoice("partitioner", spcclSparsePartitionerName, spcclNumPartitioners, value,
                         &options->partitioner);
    case 't':
      return parseUnsigned(value, 0, &options->tag) ||
             badValue("tag", value, "an unsigned integer");
    case kSeedFlag:
      return parseUnsigned(value, 0, &workload.seed) ||
             badValue("seed", value, "an unsigned integer");
    case kCooFlag:
      options->cooInterface = true;
      return true;
    case kInputFlag:
      options->inputDir = value;
      return !options->inputDir.empty() || badValue("input", value, "a directory");
    default:
      return false;
  }
}

bool validateSparse(const PerfOptions& options) {
  for (const spcclRedOp_t op : options.ops) {
    if (op != spcclSum && op != spcclAvg) {
      std::fprintf(stderr, "op %s: the sparse all-reduce has sum and avg only\n", spcclOpName(op));
      return false;
    }
  }
  return true;
}

}  // namespace

OptionExtension sparseOptionExtension(SparseOptions* options) {
  OptionExtension extension;
  extension.shortOptions = "D:O:Z:H:a:E:P:t:";
  extension.longOptions = {
      {"density", required_argument, nullptr, 'D'},
      {"overlap", required_argument, nullptr, 'O'},
      {"zipf", required_argument, nullptr, 'Z'},
      {"row-width", required_argument, nullptr, 'H'},
      {"algorithm", required_argument, nullptr, 'a'},
      {"encoding", required_argument, nullptr, 'E'},
      {"partitioner", required_argument, nullptr, 'P'},
      {"tag", required_argument, nullptr, 't'},
      {"input", required_argument, nullptr, kInputFlag},
      {"seed", required_argument, nullptr, kSeedFlag},
      {"coo", no_argument, nullptr, kCooFlag},
  };
  extension.usage =
      std::string(
          "\t(sparse: -o takes sum or avg)\n"
          "\t[-D,--density <fraction of non-zero elements per rank, default 0.01>]\n"
          "\t[-O,--overlap <fraction of each rank's non-zeros from a pool shared by all ranks, "
          "default 0.5>]\n"
          "\t[-Z,--zipf <exponent: rows drawn Zipf-distributed, default 0 = uniform>]\n"
          "\t[-H,--row-width <elements per row, whole rows non-zero, default 1>]\n") +
      usageLine("-a,--algorithm", spcclSparseAlgorithmName, spcclSparseNumAlgorithms, "/") +
      usageLine("-E,--encoding", spcclSparseEncodingName, spcclNumEncodings, "/") +
      usageLine("-P,--partitioner", spcclSparsePartitionerName, spcclNumPartitioners, "/") +
      "\t[-t,--tag <profiling tag, default: one per row>]\n"
      "\t[--input <DIR: replay DIR/rank<R>.npy, or rank<R>_indices.npy + rank<R>_values.npy;\n"
      "\t          sizes and type come from the files>]\n"
      "\t[--seed <input generator seed, default 1>]\n"
      "\t[--coo (time the COO-in, COO-out call on pre-extracted non-zeros)]\n";
  extension.apply = [options](int flag, const char* value) {
    return applySparseOption(options, flag, value);
  };
  extension.validate = [options](const PerfOptions& perf) {
    if (perf.deviceBuffers && options->cooInterface) {
      std::fprintf(stderr, "--device with --coo: the COO arrays stay host memory; not supported\n");
      return false;
    }
    return validateSparse(perf);
  };
  return extension;
}

uint64_t sparseTagFor(const SparseOptions& options, size_t count, spcclDataType_t type,
                      spcclRedOp_t op) {
  if (options.tag != 0) return options.tag;
  // FNV-1a over the row's key; the top bit keeps it clear of small
  // user-chosen tags.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const uint64_t part :
       {uint64_t{count}, static_cast<uint64_t>(type), static_cast<uint64_t>(op)}) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (part >> (8 * byte)) & 0xff;
      hash *= 0x100000001b3ull;
    }
  }
  return hash | (1ull << 63);
}

}  // namespace spccl::perf

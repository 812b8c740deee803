// The kernels libspccl embeds in its fatbins (kernels/device_reduce,
// device_sparse, device_rows, device_codecs), compiled from the same
// sources into this binary and launched as libspccl launches them: first
// checked against host references on a small size, then timed against a
// device-to-device copy of the same bytes (docs/perf/gpu.md, "The embedded
// device kernels"). Runs anywhere: without a usable device it says so and
// exits 0. Exits 1 on a mismatch or a failing CUDA call, 2 on bad usage.
//
//   device_kernels_bench [-c] [-n SIZES] [-w WARMUP] [-i ITERATIONS]
//     -c  the checks only
//     -n  f32 elements per case, comma-separated, K/M/G suffixes
//         (default 16M,256M)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "device_kernels/bench_table.cuh"
#include "device_kernels/reference_checks.cuh"

namespace dk = spccl::perf::device_kernels;

namespace {

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "device_kernels_bench: %s\n"
               "usage: device_kernels_bench [-c] [-n SIZES] [-w WARMUP] [-i ITERATIONS]\n",
               problem);
  std::exit(2);
}

// "16M" -> 16 * 2^20; 0 for a malformed size.
uint64_t parseSize(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  const std::string suffix(end);
  if (suffix.empty()) return value;
  if (suffix == "K") return value << 10;
  if (suffix == "M") return value << 20;
  if (suffix == "G") return value << 30;
  return 0;
}

int parsePositive(const char* text, const char* what) {
  const int value = std::atoi(text);
  if (value <= 0) usage(what);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  bool checksOnly = false;
  dk::BenchOptions options;
  std::string sizes = "16M,256M";
  for (int i = 1; i < argc; ++i) {
    const bool hasValue = i + 1 < argc;
    if (std::strcmp(argv[i], "-c") == 0) {
      checksOnly = true;
    } else if (std::strcmp(argv[i], "-n") == 0 && hasValue) {
      sizes = argv[++i];
    } else if (std::strcmp(argv[i], "-w") == 0 && hasValue) {
      options.warmup = parsePositive(argv[++i], "-w: a positive number of warm-up runs");
    } else if (std::strcmp(argv[i], "-i") == 0 && hasValue) {
      options.iterations = parsePositive(argv[++i], "-i: a positive number of timed runs");
    } else {
      usage((std::string("unknown or incomplete argument ") + argv[i]).c_str());
    }
  }
  for (size_t start = 0; start <= sizes.size();) {
    const size_t comma = std::min(sizes.find(',', start), sizes.size());
    const uint64_t size = parseSize(sizes.substr(start, comma - start));
    if (size == 0) usage(("-n: bad size in \"" + sizes + "\"").c_str());
    options.sizes.push_back(size);
    start = comma + 1;
  }

  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("device_kernels_bench: no usable CUDA device (%s): nothing checked or measured\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return 0;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  std::printf("# device_kernels_bench on %s (sm_%d%d); median of %d runs after %d warm-up\n",
              properties.name, properties.major, properties.minor, options.iterations,
              options.warmup);
  const int failed = dk::runReferenceChecks();
  if (failed > 0) {
    std::printf("device_kernels_bench: %d check(s) MISMATCH: no figures\n", failed);
    return 1;
  }
  if (checksOnly) return 0;
  dk::printBenchTable(options);
  return 0;
}

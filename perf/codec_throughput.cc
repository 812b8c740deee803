// Throughput of the CPU codecs (kernels.h) on one core, no communicator:
// quantize (with and without error feedback), dequantize and dequantizeAdd
// per codec, width and input type, for the reference scalar code and each
// fast variant the CPU runs (kernels/cpu/compress/compress_cpu.h).
//
//   codec_throughput [-n COUNT] [-B BLOCK] [-s SAMPLES] [-t MIN_SECONDS] [-W]
//                    [-d f32|f16|bf16] [-m piecewise|linear]
//                    [-v reference|baseline|avx2|avx2+f16c]
//                    [-q BITS...]
//
// GB/s = bytes of the uncompressed tensor (count x type size; for
// dequantizeAdd, of the f32 accumulator) / second, 1 GB = 1e9 B; each figure is the median over
// SAMPLES samples, a sample repeating the call until it has run MIN_SECONDS. Time is the thread's
// CPU time (so a machine shared with other jobs slows the figures less), or wall-clock time with
// -W. Input: N(0, 1).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compress/codec_table.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/half_float.h"

namespace {

using spccl::kernels::Codec;
using spccl::kernels::CodecVariant;
using spccl::kernels::KernelTable;
using spccl::kernels::QuantizerSpec;

struct Options {
  size_t count = size_t{4} << 20;
  size_t block = 256;
  int samples = 7;
  double minSeconds = 0.05;
  std::vector<int> bits = {2, 3, 4, 5, 6, 7, 8};
  bool wallClock = false;
  std::string type;     // -d f32|f16|bf16: only that type
  std::string codec;    // -m piecewise|linear: only that codec
  std::string variant;  // -v reference|baseline|avx2|avx2+f16c: only that one
};

double now(bool wallClock) {
  if (wallClock)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double medianSecondsPerCall(const Options& options, const std::function<void()>& call) {
  std::vector<double> samples;
  call();  // warm-up: page faults, caches
  for (int s = 0; s < options.samples; ++s) {
    int calls = 0;
    const double start = now(options.wallClock);
    double elapsed = 0;
    do {
      call();
      ++calls;
      elapsed = now(options.wallClock) - start;
    } while (elapsed < options.minSeconds);
    samples.push_back(elapsed / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::vector<unsigned char> gaussianInput(spcclDataType_t type, size_t count) {
  std::mt19937_64 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<unsigned char> out(count * spcclTypeSize(type));
  for (size_t i = 0; i < count; ++i) {
    const float v = dist(rng);
    if (type == spcclFloat32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      const uint16_t h = type == spcclFloat16 ? spccl::kernels::floatToHalf(v)
                                              : spccl::kernels::floatToBfloat16(v);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-W") o.wallClock = true;
    if (i + 1 >= argc) break;
    if (flag == "-n")
      o.count = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "-B")
      o.block = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "-s")
      o.samples = std::atoi(argv[++i]);
    else if (flag == "-t")
      o.minSeconds = std::atof(argv[++i]);
    else if (flag == "-d")
      o.type = argv[++i];
    else if (flag == "-m")
      o.codec = argv[++i];
    else if (flag == "-v")
      o.variant = argv[++i];
    else if (flag == "-q") {
      o.bits.clear();
      while (i + 1 < argc && argv[i + 1][0] != '-') o.bits.push_back(std::atoi(argv[++i]));
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::vector<std::pair<const char*, KernelTable>> tables;
  KernelTable reference{};
  spccl::kernels::addReferenceCompressionKernels(reference);
  tables.emplace_back("reference", reference);
  for (CodecVariant v : spccl::kernels::kCodecVariants) {
    if (!spccl::kernels::codecVariantSupported(v)) continue;
    KernelTable t{};
    spccl::kernels::addCompressionKernels(t, v);
    tables.emplace_back(spccl::kernels::codecVariantName(v), t);
  }
  std::printf(
      "# count %zu, block %zu, median of %d samples of >= %.3f s %s time; GB/s of the "
      "uncompressed tensor\n",
      options.count, options.block, options.samples, options.minSeconds,
      options.wallClock ? "wall-clock" : "thread CPU");
  std::printf("# %-9s %-9s %4s %5s | %9s %9s | %9s %9s\n", "variant", "codec", "bits", "type",
              "quant", "quant+ef", "dequant", "deq_add");
  const size_t n = options.count;
  std::vector<float> residual(n), acc(n);
  for (spcclDataType_t type : {spcclFloat32, spcclFloat16, spcclBfloat16}) {
    const char* typeName = type == spcclFloat32 ? "f32" : type == spcclFloat16 ? "f16" : "bf16";
    if (!options.type.empty() && options.type != typeName) continue;
    const std::vector<unsigned char> input = gaussianInput(type, n);
    std::vector<unsigned char> output(input.size());
    const double bytes = static_cast<double>(input.size());
    for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
      const char* codecName = spccl::compress::codecName(codec);
      if (!options.codec.empty() && options.codec != codecName) continue;
      for (int bits : options.bits) {
        const QuantizerSpec spec{codec, bits, options.block};
        std::vector<unsigned char> encoded(spccl::kernels::quantizedBytes(spec, n));
        for (const auto& entry : tables) {
          // Not a structured binding: clang 14 (clang-tidy) cannot capture one in a lambda.
          const char* name = entry.first;
          const KernelTable& table = entry.second;
          if (!options.variant.empty() && options.variant != name) continue;
          const double quant = medianSecondsPerCall(options, [&] {
            table.quantize[type](spec, input.data(), n, encoded.data(), nullptr);
          });
          std::fill(residual.begin(), residual.end(), 0.0f);
          const double feedback = medianSecondsPerCall(options, [&] {
            table.quantize[type](spec, input.data(), n, encoded.data(), residual.data());
          });
          table.quantize[type](spec, input.data(), n, encoded.data(), nullptr);
          const double dequant = medianSecondsPerCall(
              options, [&] { table.dequantize[type](spec, encoded.data(), n, output.data()); });
          const double add = medianSecondsPerCall(
              options, [&] { table.dequantizeAdd(spec, encoded.data(), n, acc.data()); });
          std::printf("  %-9s %-9s %4d %5s | %9.2f %9.2f | %9.2f %9.2f\n", name, codecName, bits,
                      typeName, bytes / quant / 1e9, bytes / feedback / 1e9, bytes / dequant / 1e9,
                      4.0 * n / add / 1e9);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}

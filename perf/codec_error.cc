// Quantization error of the CPU codecs (kernels.h), no communicator: each
// codec, width and scale granularity quantizes and dequantizes the same f32
// tensor through the kernel table the library uses (cpuKernels()), and the
// tool reports the MSE, the MSE relative to the data's variance, the SNR,
// the largest |error| and how much of the documented per-element bound
// (halfStepFraction x block scale, kernels.h) it uses. docs/perf/
// compression.md is the study built from it (issue 4, item 5).
//
//   codec_error [-n COUNT] [-B BLOCK] [-q BITS...] [-T BOUND_FACTOR]
//
// Data, unit variance, fixed seeds (same numbers every run): N(0, 1);
// Student-t with 3 degrees of freedom divided by sqrt(3); Laplace with
// scale 1/sqrt(2). The generators are written out here (mt19937_64, whose
// output the standard fixes, Box-Muller, inversion) rather than taken from
// <random>'s distributions, whose algorithms vary between libraries.
// Scales: per block of BLOCK elements (default 256) and per tensor (one
// block of COUNT elements).
//
// Exit status 1 if any element's |decoded - input| exceeds
// BOUND_FACTOR x halfStepFraction(codec, bits) x m (default factor 1; m =
// max |v| over its block, computed here from the input), plus 4 f32 ulps
// of m for the roundings of x = |v|/m and of m x level. A factor below 1
// makes it fail (its ctest checks that it can).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compress/codec_table.h"
#include "kernels/kernels.h"

namespace {

using spccl::kernels::Codec;
using spccl::kernels::QuantizerSpec;

struct Options {
  size_t count = size_t{4} << 20;
  size_t block = 256;
  std::vector<int> bits = {2, 3, 4, 5, 6, 7, 8};
  double boundFactor = 1.0;
};

// Uniform on the open interval (0, 1) from the top 53 bits.
double uniform(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; }

// Box-Muller: two independent N(0, 1) per call.
struct GaussianSource {
  std::mt19937_64 rng;
  double spare = 0;
  bool haveSpare = false;
  explicit GaussianSource(uint64_t seed) : rng(seed) {}
  double next() {
    if (haveSpare) {
      haveSpare = false;
      return spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform(rng)));
    const double angle = 2.0 * M_PI * uniform(rng);
    spare = r * std::sin(angle);
    haveSpare = true;
    return r * std::cos(angle);
  }
};

struct Distribution {
  const char* name;
  std::vector<float> (*generate)(size_t count);
};

std::vector<float> gaussian(size_t count) {
  GaussianSource g(1);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(g.next());
  return v;
}

// t_3 = Z / sqrt(chi2_3 / 3), variance 3: divided by sqrt(3).
std::vector<float> studentT3(size_t count) {
  GaussianSource g(2);
  std::vector<float> v(count);
  for (float& x : v) {
    const double z = g.next();
    double chi2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double w = g.next();
      chi2 += w * w;
    }
    x = static_cast<float>(z / std::sqrt(chi2 / 3.0) / std::sqrt(3.0));
  }
  return v;
}

// Laplace(0, b) by inversion, variance 2 b^2 = 1.
std::vector<float> laplace(size_t count) {
  std::mt19937_64 rng(3);
  const double b = 1.0 / std::sqrt(2.0);
  std::vector<float> v(count);
  for (float& x : v) {
    const double u = uniform(rng);
    x = static_cast<float>(u < 0.5 ? b * std::log(2.0 * u) : -b * std::log(2.0 * (1.0 - u)));
  }
  return v;
}

struct ErrorRow {
  double mse = 0, maxAbs = 0, maxOverBound = 0;
  size_t over = 0;
};

ErrorRow measure(const QuantizerSpec& spec, const std::vector<float>& input, double boundFactor) {
  const auto& table = spccl::kernels::cpuKernels();
  const size_t n = input.size();
  std::vector<unsigned char> encoded(spccl::kernels::quantizedBytes(spec, n));
  std::vector<float> decoded(n);
  table.quantize[spcclFloat32](spec, input.data(), n, encoded.data(), nullptr);
  table.dequantize[spcclFloat32](spec, encoded.data(), n, decoded.data());
  const double h = spccl::kernels::halfStepFraction(spec.codec, spec.bits);
  ErrorRow row;
  double sum = 0;
  for (size_t begin = 0; begin < n; begin += spec.blockSize) {
    const size_t end = std::min(n, begin + spec.blockSize);
    double m = 0;
    for (size_t i = begin; i < end; ++i) m = std::max(m, std::fabs(static_cast<double>(input[i])));
    const double bound = boundFactor * h * m + 4 * FLT_EPSILON * m;
    for (size_t i = begin; i < end; ++i) {
      const double err = std::fabs(static_cast<double>(decoded[i]) - input[i]);
      sum += err * err;
      row.maxAbs = std::max(row.maxAbs, err);
      if (m > 0) row.maxOverBound = std::max(row.maxOverBound, err / (h * m));
      if (!(err <= bound)) ++row.over;
    }
  }
  row.mse = sum / static_cast<double>(n);
  return row;
}

double variance(const std::vector<float>& v) {
  double mean = 0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double s = 0;
  for (float x : v) s += (x - mean) * (x - mean);
  return s / static_cast<double>(v.size());
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) break;
    if (flag == "-n")
      o.count = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "-B")
      o.block = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "-T")
      o.boundFactor = std::atof(argv[++i]);
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
  if (options.count == 0 || options.block == 0) {
    std::fprintf(stderr, "codec_error: -n and -B must be >= 1\n");
    return 2;
  }
  for (int b : options.bits)
    if (b < spccl::kernels::kMinQuantizerBits || b > spccl::kernels::kMaxQuantizerBits) {
      std::fprintf(stderr, "codec_error: bits %d outside 2..8\n", b);
      return 2;
    }
  const Distribution distributions[] = {
      {"gaussian", gaussian}, {"student-t3", studentT3}, {"laplace", laplace}};
  const size_t blocks[] = {options.block, options.count};
  std::printf(
      "# codec_error: %zu f32 elements, scales per block of %zu and per tensor; "
      "bound factor %g\n",
      options.count, options.block, options.boundFactor);
  std::printf(
      "# MSE/var: MSE over the data's variance; SNR = 10 log10(var/MSE); "
      "err/bound: max |error| / (halfStepFraction x block scale)\n\n");
  size_t over = 0;
  for (const Distribution& d : distributions) {
    const std::vector<float> data = d.generate(options.count);
    const double var = variance(data);
    double maxAbs = 0;
    for (float x : data) maxAbs = std::max(maxAbs, std::fabs(static_cast<double>(x)));
    std::printf("## %s: variance %.4f, max |v| %.3f\n\n", d.name, var, maxAbs);
    std::printf(
        "| scale | codec | bits | MSE | MSE/var | SNR dB | max abs err | err/bound | over |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    // mseOverVar[scale][codec][bits index], for the summary below.
    std::vector<double> summary[2][2];
    for (int s = 0; s < 2; ++s) {
      for (Codec codec : {Codec::Piecewise, Codec::Linear}) {
        for (int bits : options.bits) {
          const QuantizerSpec spec{codec, bits, blocks[s]};
          const ErrorRow r = measure(spec, data, options.boundFactor);
          over += r.over;
          summary[s][codec == Codec::Linear].push_back(r.mse / var);
          std::printf("| %s | %s | %d | %.4g | %.4g | %.2f | %.4g | %.5f | %zu |\n",
                      s == 0 ? ("block " + std::to_string(options.block)).c_str() : "tensor",
                      spccl::compress::codecName(codec), bits, r.mse, r.mse / var,
                      10 * std::log10(var / r.mse), r.maxAbs, r.maxOverBound, r.over);
        }
      }
    }
    std::printf("\n%s, MSE/var (lower is better; lin/pw > 1: piecewise wins):\n\n", d.name);
    std::printf(
        "| bits | piecewise B=%zu | linear B=%zu | lin/pw | piecewise tensor | "
        "linear tensor | lin/pw |\n",
        options.block, options.block);
    std::printf("|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < options.bits.size(); ++k)
      std::printf("| %d | %.4g | %.4g | %.3f | %.4g | %.4g | %.3f |\n", options.bits[k],
                  summary[0][0][k], summary[0][1][k], summary[0][1][k] / summary[0][0][k],
                  summary[1][0][k], summary[1][1][k], summary[1][1][k] / summary[1][0][k]);
    std::printf("\n");
  }
  std::printf("# elements beyond the bound: %zu %s\n", over, over ? "FAILED" : "OK");
  return over ? 1 : 0;
}

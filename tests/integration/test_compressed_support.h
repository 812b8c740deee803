// Helpers shared by the compressed all-reduce tests with forked ranks
// (test_compressed_api.cc, test_token_topk.cc) and the GPU collectives
// (tests/gpu/test_gpu_collectives.cc): the documented half step and error
// bound, typed buffers with plain IEEE f16/bf16 roundings, Gaussian inputs,
// the token scores and their reference mask, and the checks every test
// ends with.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "spccl.h"

namespace spccl::testing {

// Half the widest step as a fraction of the block scale (docs/compressed.md):
// piecewise m/(2N), linear m/(2(2^N - 1)), N = bits - 1.
inline double halfStep(spcclCodec_t codec, int bits) {
  const int n = bits - 1;
  return codec == spcclCodecPiecewise ? 0.5 / n : 0.5 / ((1 << n) - 1);
}

inline uint16_t toHalf(float f, spcclDataType_t type) {
  // Round to nearest even through the library's own f16/bf16 conversion
  // would hide a shared bug; these are the plain IEEE roundings.
  if (type == spcclBfloat16) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b += 0x7fffu + ((b >> 16) & 1u);
    return static_cast<uint16_t>(b >> 16);
  }
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

inline float fromHalf(uint16_t v, spcclDataType_t type) {
  if (type == spcclBfloat16) {
    uint32_t b = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  _Float16 h;
  std::memcpy(&h, &v, 2);
  return static_cast<float>(h);
}

// A buffer of `type` holding rank r's input, and the values as stored.
struct TypedBuffer {
  spcclDataType_t type;
  std::vector<unsigned char> bytes;
  std::vector<float> values;

  TypedBuffer(spcclDataType_t t, size_t count)
      : type(t), bytes(count * spcclTypeSize(t)), values(count) {}
  void set(size_t i, float v) {
    if (type == spcclFloat32) {
      std::memcpy(bytes.data() + 4 * i, &v, 4);
      values[i] = v;
    } else {
      const uint16_t h = toHalf(v, type);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
      values[i] = fromHalf(h, type);
    }
  }
  float get(size_t i) const {
    if (type == spcclFloat32) {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return fromHalf(h, type);
  }
};

inline TypedBuffer inputOf(int rank, spcclDataType_t type, size_t count, uint64_t salt) {
  std::mt19937_64 rng(1000 * rank + salt);
  std::normal_distribution<double> gauss(0.0, 1.0);
  TypedBuffer b(type, count);
  for (size_t i = 0; i < count; ++i) {
    double v = gauss(rng);
    if (i % 97 == 5) v *= 20;  // a few large values: blocks with uneven scales
    if (i % 61 == 7) v = 0;
    b.set(i, static_cast<float>(v));
  }
  return b;
}

// "" when every element of out is within the error bound of
// docs/compressed.md of the exact sum (or average) of inputs (one per
// rank, in rank order), else the first element beyond it. block 0: the
// default block size.
inline std::string compressedBoundViolation(const std::vector<TypedBuffer>& inputs,
                                            const TypedBuffer& out, spcclCodec_t codec, int bits,
                                            size_t block, spcclCompressSchedule_t schedule,
                                            spcclRedOp_t op) {
  const int nranks = static_cast<int>(inputs.size());
  const size_t count = out.values.size();
  if (block == 0) block = SPCCL_COMPRESSION_DEFAULT_BLOCK;
  const double h = halfStep(codec, bits);
  const double outRounding = out.type == spcclFloat16    ? 1.0 / 2048
                             : out.type == spcclBfloat16 ? 1.0 / 256
                                                         : 0;
  const double divisor = op == spcclAvg ? nranks : 1;
  for (size_t b = 0; b * block < count; ++b) {
    const size_t end = std::min(count, (b + 1) * block);
    double a = 0;  // A_b: sum over ranks of the block's max |x_r|
    for (int r = 0; r < nranks; ++r) {
      double m = 0;
      for (size_t i = b * block; i < end; ++i)
        m = std::max(m, std::fabs(double(inputs[r].values[i])));
      a += m;
    }
    const double quantization =
        schedule == spcclCompressTwoShot ? h * a * (2 + h) : a * (std::pow(1 + h, nranks) - 1);
    for (size_t i = b * block; i < end; ++i) {
      double exact = 0;
      for (int r = 0; r < nranks; ++r) exact += inputs[r].values[i];
      exact /= divisor;
      const double got = out.get(i);
      const double bound =
          quantization / divisor + 1e-5 * a * nranks + outRounding * std::fabs(got) + 1e-30;
      if (!(std::fabs(got - exact) <= bound)) {
        char text[200];
        std::snprintf(text, sizeof(text),
                      "element %zu is %.9g, exact %.9g, error %.3g > bound %.3g", i, got, exact,
                      std::fabs(got - exact), bound);
        return text;
      }
    }
  }
  return "";
}

// Rank r's score of token t: small integers, so the global sums are exact
// in f32 and many of them tie.
inline float scoreOf(int rank, size_t t) {
  return static_cast<float>((t * 7 + rank * 3 + t / 5) % 5);
}

inline std::vector<float> scoresOf(int rank, size_t tokens) {
  std::vector<float> s(tokens);
  for (size_t t = 0; t < tokens; ++t) s[t] = scoreOf(rank, t);
  return s;
}

// Highest global score first, ties by lower token index.
inline std::vector<unsigned char> referenceMask(int nranks, size_t tokens, size_t keep) {
  std::vector<double> sum(tokens, 0.0);
  for (int r = 0; r < nranks; ++r)
    for (size_t t = 0; t < tokens; ++t) sum[t] += scoreOf(r, t);
  std::vector<size_t> order(tokens);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sum[a] > sum[b]; });
  std::vector<unsigned char> mask(tokens, 0);
  for (size_t i = 0; i < keep; ++i) mask[order[i]] = 1;
  return mask;
}

inline uint64_t fnv(const unsigned char* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

inline void expectAllExitedOk(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_FALSE(outcomes[r].timedOut) << "rank " << r << " hung";
    EXPECT_TRUE(outcomes[r].exited) << "rank " << r;
    EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
  }
}

inline bool failsNaming(spcclResult_t result, spcclComm_t comm, const char* text) {
  if (result != spcclInvalidArgument) {
    std::fprintf(stderr, "expected invalid argument for '%s', got %d\n", text, result);
    return false;
  }
  if (std::string(spcclGetLastError(comm)).find(text) == std::string::npos) {
    std::fprintf(stderr, "message '%s' does not name '%s'\n", spcclGetLastError(comm), text);
    return false;
  }
  return true;
}

}  // namespace spccl::testing

// Helpers shared by the compressed all-reduce tests with forked ranks
// (test_compressed_api.cc, test_token_topk.cc): the documented half step,
// typed buffers with plain IEEE f16/bf16 roundings, Gaussian inputs, and
// the checks every test ends with.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

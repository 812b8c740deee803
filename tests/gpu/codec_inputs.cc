#include "codec_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gpu_test_support.h"
#include "kernels/cpu/half_float.h"

namespace spccl::gpu_test {
namespace {

void storeAs(spcclDataType_t type, float v, unsigned char* out) {
  if (type == spcclFloat32) {
    std::memcpy(out, &v, 4);
  } else {
    const uint16_t narrow =
        type == spcclFloat16 ? kernels::floatToHalf(v) : kernels::floatToBfloat16(v);
    std::memcpy(out, &narrow, 2);
  }
}

}  // namespace

std::vector<unsigned char> codecInput(spcclDataType_t type, size_t count, size_t blockSize,
                                      int bits, std::mt19937_64& rng) {
  const size_t bytes = spcclTypeSize(type);
  std::vector<unsigned char> out(count * bytes);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int halfSteps = 2 << (bits - 1);  // midpoints of the linear grid, most piecewise ones
  for (size_t begin = 0; begin < count; begin += blockSize) {
    const size_t end = std::min(count, begin + blockSize);
    const uint64_t kind = rng() % 16;
    const float scale = kind == 2 ? (type == spcclFloat16 ? 1e-6f : 1e-39f)  // subnormal
                                  : std::ldexp(1.0f, exponent(rng));
    for (size_t i = begin; i < end; ++i) {
      float v = normal(rng) * scale;
      if (kind == 0) v = (rng() & 1) ? 0.0f : -0.0f;
      if (kind == 3)
        v = scale * static_cast<float>(static_cast<int>(rng() % (2 * halfSteps + 1)) - halfSteps) /
            halfSteps;
      storeAs(type, v, out.data() + i * bytes);
    }
    if (kind == 1)
      storeAs(type, (rng() & 1) ? inf : nan, out.data() + (begin + rng() % (end - begin)) * bytes);
  }
  return out;
}

std::vector<float> smallFloats(size_t count, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 0.01f);
  std::vector<float> out(count);
  for (auto& v : out) v = normal(rng);
  return out;
}

}  // namespace spccl::gpu_test

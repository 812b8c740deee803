// The GPU tests' own inputs (gpu_test_support.h): randomElements() must
// hold every adversarial class it promises, or the bit-for-bit comparisons
// of the GPU tests would prove less than they claim.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "gpu_test_support.h"

namespace spccl::gpu_test {
namespace {

// Which adversarial classes a buffer of `type` holds.
struct ValueClasses {
  bool positiveZero = false, negativeZero = false, infinity = false, quietNaN = false,
       signallingNaN = false, subnormal = false, integerMin = false, integerMax = false,
       minusOne = false;
};

ValueClasses classify(spcclDataType_t type, const std::vector<unsigned char>& bytes) {
  ValueClasses found;
  const size_t size = spcclTypeSize(type);
  for (size_t i = 0; i + size <= bytes.size(); i += size) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i, size);
    const bool isSigned = type == spcclInt8 || type == spcclInt32 || type == spcclInt64;
    if (type == spcclFloat16 || type == spcclBfloat16 || type == spcclFloat32 ||
        type == spcclFloat64) {
      int exponentBits = 8, mantissaBits = 23;
      if (type == spcclFloat16) exponentBits = 5, mantissaBits = 10;
      if (type == spcclBfloat16) exponentBits = 8, mantissaBits = 7;
      if (type == spcclFloat64) exponentBits = 11, mantissaBits = 52;
      const uint64_t mantissa = bits & ((uint64_t{1} << mantissaBits) - 1);
      const uint64_t exponent = (bits >> mantissaBits) & ((uint64_t{1} << exponentBits) - 1);
      const bool sign = (bits >> (mantissaBits + exponentBits)) & 1;
      const uint64_t allOnes = (uint64_t{1} << exponentBits) - 1;
      const bool quiet = (mantissa >> (mantissaBits - 1)) & 1;
      found.positiveZero |= exponent == 0 && mantissa == 0 && !sign;
      found.negativeZero |= exponent == 0 && mantissa == 0 && sign;
      found.subnormal |= exponent == 0 && mantissa != 0;
      found.infinity |= exponent == allOnes && mantissa == 0;
      found.quietNaN |= exponent == allOnes && mantissa != 0 && quiet;
      found.signallingNaN |= exponent == allOnes && mantissa != 0 && !quiet;
    } else {
      const uint64_t all = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
      const uint64_t top = uint64_t{1} << (8 * size - 1);
      found.positiveZero |= bits == 0;
      found.minusOne |= bits == all;
      found.integerMin |= isSigned ? bits == top : bits == 0;
      found.integerMax |= isSigned ? bits == top - 1 : bits == all;
    }
  }
  return found;
}

TEST(CudaLogicOnHost, GpuTestInputsHoldTheAdversarialValues) {
  std::mt19937_64 rng(1);
  for (const spcclDataType_t type : kAllTypes) {
    SCOPED_TRACE(spcclTypeName(type));
    const ValueClasses found = classify(type, randomElements(type, 20000, rng, 0.05));
    EXPECT_TRUE(found.positiveZero);
    if (type == spcclFloat16 || type == spcclBfloat16 || type == spcclFloat32 ||
        type == spcclFloat64) {
      EXPECT_TRUE(found.negativeZero);
      EXPECT_TRUE(found.infinity);
      EXPECT_TRUE(found.quietNaN);
      EXPECT_TRUE(found.signallingNaN);
      EXPECT_TRUE(found.subnormal);
    } else {
      EXPECT_TRUE(found.minusOne);
      EXPECT_TRUE(found.integerMin);
      EXPECT_TRUE(found.integerMax);
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test

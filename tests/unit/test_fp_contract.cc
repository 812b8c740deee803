// The host rounds as the device does: every multiply and add rounded on
// its own. nvcc builds the kernels with -fmad=false (cmake/SpcclCuda.cmake);
// the host build passes -ffp-contract=off (CMakeLists.txt), so a build
// that enables FMA (-march=native, -mfma) still rounds m * level before
// the subtraction, as the CPU reference and the device do. Without the
// option GCC fuses the two into one FMA, and the codecs' residuals and
// decodes would differ from the device's in the last bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "fp_contract_probe.h"

namespace {

TEST(FpContract, MultiplyAndSubtractRoundSeparatelyWhereFmaIsAvailable) {
#if defined(__x86_64__)
  ASSERT_TRUE(spccl::test::probeHasFma())
      << "the probe was not compiled with -mfma: it proves nothing";
  if (!__builtin_cpu_supports("fma")) GTEST_SKIP() << "this CPU has no FMA instructions";
  // m * level = 1 + 2^-11 + 2^-24: rounded to float, the 2^-24 (half an
  // ulp, a tie to even) is dropped, so v - round(m * level) is exactly 0;
  // fused, it is -2^-24.
  const float m = 1.0f + std::ldexp(1.0f, -12);
  const float level = m;
  const float v = 1.0f + std::ldexp(1.0f, -11);
  ASSERT_EQ(std::fma(-m, level, v), -std::ldexp(1.0f, -24)) << "the inputs must tell the two apart";
  EXPECT_EQ(std::bit_cast<uint32_t>(spccl::test::residualWithFmaAvailable(v, m, level)),
            std::bit_cast<uint32_t>(0.0f))
      << "v - m * level was fused into one FMA: the host no longer rounds as the device";
#else
  GTEST_SKIP() << "the probe is built with -mfma on x86-64 only";
#endif
}

}  // namespace

// The pieces of the perf harness that need no communicator: option
// parsing, half/bfloat16 conversion, and the claim that every reference
// result is exact in every type.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/element_codec.h"
#include "common/half_float.h"
#include "common/perf_options.h"
#include "common/reference_data.h"

namespace spccl::perf {
namespace {

TEST(ByteSize, AcceptsNcclTestsSuffixes) {
  size_t bytes = 0;
  ASSERT_TRUE(parseByteSize("8", &bytes));
  EXPECT_EQ(bytes, 8u);
  ASSERT_TRUE(parseByteSize("1K", &bytes));
  EXPECT_EQ(bytes, 1024u);
  ASSERT_TRUE(parseByteSize("64M", &bytes));
  EXPECT_EQ(bytes, 64u << 20);
  ASSERT_TRUE(parseByteSize("2g", &bytes));
  EXPECT_EQ(bytes, 2ull << 30);
  ASSERT_TRUE(parseByteSize("1.5K", &bytes));
  EXPECT_EQ(bytes, 1536u);
}

TEST(ByteSize, RejectsGarbage) {
  size_t bytes = 0;
  EXPECT_FALSE(parseByteSize("", &bytes));
  EXPECT_FALSE(parseByteSize("-1", &bytes));
  EXPECT_FALSE(parseByteSize("1Q", &bytes));
  EXPECT_FALSE(parseByteSize("1KB", &bytes));
  EXPECT_FALSE(parseByteSize("M", &bytes));
}

TEST(Options, ParsesNcclTestsFlags) {
  const char* args[] = {"all_reduce_perf",
                        "-b",
                        "8",
                        "-e",
                        "128M",
                        "-f",
                        "2",
                        "-n",
                        "7",
                        "-w",
                        "1",
                        "-c",
                        "0",
                        "-o",
                        "all",
                        "-d",
                        "all",
                        "-r",
                        "3",
                        "-z",
                        "1",
                        "-J",
                        "out.json"};
  std::vector<char*> argv;
  for (const char* arg : args) argv.push_back(const_cast<char*>(arg));
  PerfOptions options;
  ASSERT_EQ(parsePerfOptions(static_cast<int>(argv.size()), argv.data(), &options),
            ParseOutcome::kRun);
  EXPECT_EQ(options.minBytes, 8u);
  EXPECT_EQ(options.maxBytes, 128u << 20);
  EXPECT_EQ(options.stepFactor, 2u);
  EXPECT_EQ(options.iterations, 7);
  EXPECT_EQ(options.warmupIterations, 1);
  EXPECT_FALSE(options.check);
  EXPECT_EQ(options.ops.size(), 5u);
  EXPECT_EQ(options.types.size(), static_cast<size_t>(spcclNumTypes));
  EXPECT_EQ(options.root, 3);
  EXPECT_EQ(options.jsonPath, "out.json");
}

TEST(Options, RejectsInvertedSizesAndUnknownNames) {
  const char* inverted[] = {"perf", "-b", "2M", "-e", "1M"};
  const char* badType[] = {"perf", "-d", "float8"};
  const char* zeroIters[] = {"perf", "-n", "0"};
  for (auto* args : {inverted, badType}) {
    PerfOptions options;
    EXPECT_EQ(parsePerfOptions(args == inverted ? 5 : 3, const_cast<char**>(args), &options),
              ParseOutcome::kExitFailure);
  }
  PerfOptions options;
  EXPECT_EQ(parsePerfOptions(3, const_cast<char**>(zeroIters), &options),
            ParseOutcome::kExitFailure);
}

TEST(Options, SizesStepByFactorOrBytes) {
  PerfOptions options;
  options.minBytes = 8;
  options.maxBytes = 100;
  options.stepFactor = 2;
  EXPECT_EQ(messageSizes(options), (std::vector<size_t>{8, 16, 32, 64}));
  options.stepFactor = 1;
  options.stepBytes = 40;
  EXPECT_EQ(messageSizes(options), (std::vector<size_t>{8, 48, 88}));
}

TEST(HalfFloat, KnownEncodings) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);               // rounds to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(2049.0f), 0x6800);                // tie to even: 2048
  EXPECT_EQ(floatToHalf(2051.0f), 0x6802);                // tie to even: 2052
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(257.0f), 0x4380);  // tie to even: 256
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
}

TEST(HalfFloat, SmallIntegersRoundTrip) {
  for (int i = -2048; i <= 2048; ++i) {
    EXPECT_EQ(halfToFloat(floatToHalf(static_cast<float>(i))), static_cast<float>(i)) << i;
  }
  for (int i = -256; i <= 256; ++i) {
    EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(static_cast<float>(i))), static_cast<float>(i)) << i;
  }
}

TEST(ElementCodec, IntegersWrapLikeTheirType) {
  const ElementCodec& int8 = *elementCodecFor(spcclInt8);
  EXPECT_EQ(representable(int8, 130.0), -126.0);
  const ElementCodec& uint8 = *elementCodecFor(spcclUint8);
  EXPECT_EQ(representable(uint8, 256.0 + 7.0), 7.0);
  EXPECT_EQ(elementCodecFor(spcclNumTypes), nullptr);
}

// The harness checks with equality: every reference result must be exact
// in every type, for every op, up to the rank counts the testbed uses.
TEST(ReferenceData, EveryReducedValueIsExactInEveryType) {
  constexpr spcclRedOp_t kOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};
  for (int nranks = 1; nranks <= 16; ++nranks) {
    for (const spcclRedOp_t op : kOps) {
      const ReferenceData data(inputPatternFor(true, op), op, nranks);
      for (int t = 0; t < spcclNumTypes; ++t) {
        const ElementCodec& codec = *elementCodecFor(static_cast<spcclDataType_t>(t));
        for (size_t i = 0; i < 202; ++i) {
          const double reduced = data.reducedOverRanks(i);
          EXPECT_EQ(reduced, std::floor(reduced)) << "op " << op << " n " << nranks;
          EXPECT_GE(reduced, 1.0);
          EXPECT_EQ(representable(codec, reduced), reduced)
              << spcclTypeName(static_cast<spcclDataType_t>(t)) << " op " << op << " n " << nranks
              << " i " << i;
          for (int r = 0; r < nranks; ++r) {
            EXPECT_EQ(representable(codec, data.input(r, i)), data.input(r, i));
          }
        }
      }
    }
  }
}

TEST(ReferenceData, InputsDependOnTheRank) {
  const ReferenceData data(InputPattern::kDistinct, spcclSum, 8);
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) EXPECT_NE(data.input(a, 0), data.input(b, 0));
  }
}

}  // namespace
}  // namespace spccl::perf

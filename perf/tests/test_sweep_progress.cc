// The progress lines of a sweep (common/sweep_progress.h): the estimate of
// the time left, and the lines themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/sweep_progress.h"

namespace spccl::perf {
namespace {

TEST(SweepProgress, EstimateFollowsTheBytesLeft) {
  // 1 ms per call plus 1 ns per byte, measured exactly at 1 KiB and 1 MiB.
  auto cost = [](size_t bytes) { return 1e-3 + 1e-9 * static_cast<double>(bytes); };
  const std::vector<size_t> done = {1024, 1 << 20};
  const std::vector<double> seconds = {cost(1024), cost(1 << 20)};
  const std::vector<size_t> left = {64 << 20, 256 << 20};
  EXPECT_NEAR(estimateSecondsLeft(done, seconds, left), cost(64 << 20) + cost(256 << 20), 1e-9);
}

TEST(SweepProgress, OneSizeDoneGivesEachStepLeftTheMeanTime) {
  const std::vector<size_t> done = {4096, 4096};
  const std::vector<double> seconds = {2.0, 4.0};
  const std::vector<size_t> left = {4096, 8192, 16384};
  EXPECT_DOUBLE_EQ(estimateSecondsLeft(done, seconds, left), 9.0);
}

TEST(SweepProgress, NeitherTermGoesNegative) {
  // Larger sizes were faster (noise): no per-byte term, the mean per step.
  EXPECT_DOUBLE_EQ(estimateSecondsLeft(std::vector<size_t>{1, 1000}, std::vector<double>{3.0, 1.0},
                                       std::vector<size_t>{5000}),
                   2.0);
  // A negative intercept: the fit goes through the origin instead.
  const double left = estimateSecondsLeft(std::vector<size_t>{100, 200},
                                          std::vector<double>{0.5, 2.0}, std::vector<size_t>{400});
  EXPECT_GT(left, 0.0);
  EXPECT_NEAR(left, 400 * (100 * 0.5 + 200 * 2.0) / (100.0 * 100 + 200.0 * 200), 1e-12);
  EXPECT_DOUBLE_EQ(estimateSecondsLeft({}, {}, std::vector<size_t>{1}), 0.0);
}

TEST(SweepProgress, OneLinePerStepWhenEnabledAndNoneOtherwise) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  {
    SweepProgress progress({8, 64, 512}, true, out);
    progress.stepDone("8 bytes float sum");
    progress.stepDone("64 bytes float sum");
    progress.stepDone("512 bytes float sum");
    progress.stepDone("one too many");  // ignored
    SweepProgress quiet({8}, false, out);
    quiet.stepDone("8 bytes");
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  EXPECT_NE(lines.find("# progress: 1/3 sizes (8 bytes float sum) in "), std::string::npos);
  EXPECT_NE(lines.find(" left\n# progress: 2/3 sizes (64 bytes float sum) in "), std::string::npos);
  EXPECT_NE(lines.find("# progress: 3/3 sizes (512 bytes float sum) in "), std::string::npos);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 3) << lines;
  EXPECT_EQ(lines.find("too many"), std::string::npos);
}

TEST(SweepProgress, FlagTurnsItOnOrOff) {
  const char* on[] = {"perf", "-p", "1"};
  const char* off[] = {"perf", "--progress", "0"};
  const char* bad[] = {"perf", "-p", "2"};
  PerfOptions options;
  EXPECT_EQ(options.progress, -1);  // by default: whether stderr is a terminal
  ASSERT_EQ(parsePerfOptions(3, const_cast<char**>(on), &options), ParseOutcome::kRun);
  EXPECT_TRUE(progressWanted(options));
  ASSERT_EQ(parsePerfOptions(3, const_cast<char**>(off), &options), ParseOutcome::kRun);
  EXPECT_FALSE(progressWanted(options));
  EXPECT_EQ(parsePerfOptions(3, const_cast<char**>(bad), &options), ParseOutcome::kExitFailure);
}

}  // namespace
}  // namespace spccl::perf

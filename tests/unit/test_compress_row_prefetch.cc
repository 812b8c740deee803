// row_prefetch.h's RowLinePrefetcher: the lines it visits are those of run
// elements from, from + 16, ... below end, on the run's rows, whatever the
// row length (shorter than a line: a step crosses several rows), the
// run's first element and the range; nothing past end (the last visit of a
// run ending mid-line is that line's first element, no row past the run).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu/compress/row_prefetch.h"

namespace spccl::kernels::codec_passes {
namespace {

const float* elementAddress(const F32Run& run, size_t e) {
  const size_t at = run.first + e;
  return run.base + run.rows[at / run.hidden] * run.hidden + at % run.hidden;
}

TEST(CompressRowPrefetch, VisitsEveryLineOfTheRangeOnTheRows) {
  std::mt19937_64 rng(7);
  for (size_t hidden : {1, 5, 16, 17, 100, 1024}) {
    const size_t tokens = 64;
    std::vector<float> tensor(tokens * hidden);
    std::vector<size_t> rows;
    for (size_t t = 0; t < tokens; ++t)
      if (rng() % 2 == 0) rows.push_back(t);
    const size_t count = rows.size() * hidden;
    for (size_t first : {size_t{0}, hidden / 2, hidden}) {
      if (first > count) continue;
      const F32Run run{tensor.data(), rows.data(), hidden, first};
      const size_t length = count - first;
      for (auto [from, end] : {std::pair<size_t, size_t>{0, length},
                               {length / 3, length / 3 + 40},
                               {length / 2, length},
                               {length, length},
                               {length / 2 + 3, length / 2 + 3}}) {
        SCOPED_TRACE(testing::Message() << "hidden " << hidden << " first " << first << " [" << from
                                        << ", " << end << ")");
        end = std::min(end, length);
        std::vector<const float*> expected, visited;
        for (size_t e = from; e < end; e += RowLinePrefetcher::kLineFloats)
          expected.push_back(elementAddress(run, e));
        RowLinePrefetcher walk(run, from, end);
        while (!walk.done() && visited.size() <= expected.size()) {
          visited.push_back(walk.address());
          walk.next();
        }
        EXPECT_EQ(visited, expected);
        walk.next();  // past the end: a no-op
        EXPECT_TRUE(walk.done());
      }
    }
  }
}

}  // namespace
}  // namespace spccl::kernels::codec_passes

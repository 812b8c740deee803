// How a payload is cut across a peer's lanes (runtime/lane_split.h): the
// slices of the used lanes tile the payload exactly, in lane order, with
// aligned cut points, and the cut depends only on what both ends know.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "runtime/lane_split.h"

namespace spccl {
namespace {

std::vector<LaneSlice> slicesOf(size_t bytes, int lanes, size_t minBytes) {
  std::vector<LaneSlice> slices;
  for (int l = 0; l < lanesUsed(bytes, lanes, minBytes); ++l)
    slices.push_back(laneSlice(bytes, lanes, minBytes, l));
  return slices;
}

TEST(LaneSplit, SlicesTileThePayloadInLaneOrder) {
  const size_t sizes[] = {0,     1,     4095,          4096,    4097,    8192,
                          12289, 65536, (1 << 20) + 3, 1 << 20, 67108864};
  for (int lanes : {1, 2, 3, 4, 7, 16}) {
    for (size_t bytes : sizes) {
      std::vector<LaneSlice> slices = slicesOf(bytes, lanes, 0);
      ASSERT_GE(slices.size(), 1u);
      ASSERT_LE(slices.size(), static_cast<size_t>(lanes));
      size_t next = 0;
      for (size_t l = 0; l < slices.size(); ++l) {
        EXPECT_EQ(slices[l].offset, next) << bytes << " bytes, lane " << l << " of " << lanes;
        EXPECT_EQ(slices[l].offset % kLaneSliceAlign, 0u);
        if (bytes > 0) {
          EXPECT_GT(slices[l].bytes, 0u) << "used lanes carry something";
        }
        next += slices[l].bytes;
      }
      EXPECT_EQ(next, bytes) << bytes << " bytes over " << lanes << " lanes";
    }
  }
}

TEST(LaneSplit, SharesAreEqualUpToOneAlignedBlock) {
  std::vector<LaneSlice> slices = slicesOf(67108864, 4, 262144);
  ASSERT_EQ(slices.size(), 4u);
  for (const LaneSlice& s : slices) EXPECT_EQ(s.bytes, 16777216u);
  slices = slicesOf(1000000, 3, 0);  // 333334 rounded up to 335872
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].bytes, 335872u);
  EXPECT_EQ(slices[1].bytes, 335872u);
  EXPECT_EQ(slices[2].bytes, 1000000u - 2 * 335872u);
}

TEST(LaneSplit, SmallPayloadsStayOnTheFirstLane) {
  EXPECT_EQ(lanesUsed(262143, 4, 262144), 1);
  EXPECT_EQ(laneSlice(262143, 4, 262144, 0).bytes, 262143u);
  EXPECT_EQ(laneSlice(262143, 4, 262144, 1).bytes, 0u);
  EXPECT_EQ(lanesUsed(262144, 4, 262144), 4);
  // One aligned block cannot be cut; two blocks use two lanes of four.
  EXPECT_EQ(lanesUsed(4096, 4, 0), 1);
  EXPECT_EQ(lanesUsed(8192, 4, 0), 2);
  // Rounding up leaves the last lane empty: 5 blocks over 4 lanes are 2+2+1.
  EXPECT_EQ(lanesUsed(5 * 4096, 4, 0), 3);
}

}  // namespace
}  // namespace spccl

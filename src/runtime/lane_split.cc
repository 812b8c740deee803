#include "runtime/lane_split.h"

#include <algorithm>

namespace spccl {

namespace {

bool singleLane(size_t bytes, int lanes, size_t minBytes) {
  return lanes <= 1 || bytes < minBytes || bytes <= kLaneSliceAlign;
}

// Each lane's share: an equal part of the payload, rounded up to whole
// aligned blocks.
size_t laneShare(size_t bytes, int lanes) {
  size_t share = (bytes + lanes - 1) / static_cast<size_t>(lanes);
  return (share + kLaneSliceAlign - 1) / kLaneSliceAlign * kLaneSliceAlign;
}

}  // namespace

int lanesUsed(size_t bytes, int lanes, size_t minBytes) {
  if (singleLane(bytes, lanes, minBytes)) return 1;
  // Rounding the shares up can leave the last lanes nothing.
  return static_cast<int>((bytes + laneShare(bytes, lanes) - 1) / laneShare(bytes, lanes));
}

LaneSlice laneSlice(size_t bytes, int lanes, size_t minBytes, int lane) {
  if (singleLane(bytes, lanes, minBytes))
    return lane == 0 ? LaneSlice{0, bytes} : LaneSlice{bytes, 0};
  size_t share = laneShare(bytes, lanes);
  size_t begin = std::min(bytes, share * static_cast<size_t>(lane));
  size_t end = std::min(bytes, begin + share);
  return LaneSlice{begin, end - begin};
}

}  // namespace spccl

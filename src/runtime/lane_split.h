// How one message's payload is cut across the lanes (connections) to a
// peer: rails (devices) times connections per rail. Both ends compute the
// same cut from the payload length in the frame header, so a lane's
// connection carries its slices in message order and nothing else needs
// to travel.
#pragma once

#include <cstddef>

namespace spccl {

struct LaneSlice {
  size_t offset = 0;
  size_t bytes = 0;
};

// Cut points are multiples of this, so slices stay page-aligned for
// transports that register memory.
constexpr size_t kLaneSliceAlign = 4096;

// How many lanes a payload of `bytes` uses: 1 below minBytes (a small
// message is not worth several completions), else as many as have at least
// one aligned block, at most `lanes`. Lanes past it carry nothing.
int lanesUsed(size_t bytes, int lanes, size_t minBytes);

// The part of the payload lane `lane` carries (0 <= lane < lanesUsed):
// contiguous equal shares rounded up to kLaneSliceAlign, the last lane
// taking the rest.
LaneSlice laneSlice(size_t bytes, int lanes, size_t minBytes, int lane);

}  // namespace spccl

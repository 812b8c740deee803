// A pipelined schedule seen from one rank, as the messages it sends before
// anything arrives and what it does with each arriving message (see
// relay.h for the driver). Plans only compute addresses, so they can be
// checked without a communicator.
#pragma once

#include <cstddef>

#include "coll/partition.h"

namespace spccl {

// Staging slices a plan rotates through for reduced data it forwards; a
// slice is reused only once its send completed (SendWindow::release), so
// this also bounds how far a rank runs ahead of its downstream peer.
constexpr int kRelayStagingSlices = 9;

// One message from upstream and what to do with it once it has arrived.
struct RelayArrival {
  void* landing = nullptr;  // where the message is received
  size_t count = 0;         // elements (the message is count * elementSize bytes)
  // If set: reduceInto[i] = first[i] op second[i].
  void* reduceInto = nullptr;
  const void* first = nullptr;
  const void* second = nullptr;
  // If set: sent downstream afterwards (count elements).
  const void* forward = nullptr;
};

// A schedule seen from one rank, as two cursors in message order.
class RelayPlan {
 public:
  virtual ~RelayPlan() = default;
  // Messages sent downstream before anything arrives; false when done.
  virtual bool nextInitialSend(const void** data, size_t* count) = 0;
  virtual bool nextArrival(RelayArrival* arrival) = 0;
};

// Whether receiving `next` could clobber memory `current` still reads or
// writes. Plans double-buffer so that this is rare; it happens when a ring
// all-reduce has a single non-empty block, whose all-gather copy lands
// where its reduce-scatter result is being formed.
bool arrivalsConflict(const RelayArrival& next, const RelayArrival& current, size_t elementSize);

// The next slice of `cursor` as a message from base: the usual body of
// RelayPlan::nextInitialSend.
inline bool nextSliceMessage(SliceCursor& cursor, const char* base, size_t elementSize,
                             const void** data, size_t* count) {
  ElementRange slice;
  if (!cursor.advance(&slice)) return false;
  *data = base + slice.offset * elementSize;
  *count = slice.count;
  return true;
}

}  // namespace spccl

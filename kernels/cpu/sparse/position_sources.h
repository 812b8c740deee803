// The positions of one merge operand as the merges of merge_cpu.cc read
// them: from an array (SortedPairs), or straight from LEB128 gap varints
// (GapCodedPairs: a received Packed message), so that a message is merged
// without first being decoded into an array of positions and a copy of its
// values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/sparse_kernels.h"

namespace spccl::kernels {

class ArrayPositions {
 public:
  explicit ArrayPositions(const SortedPairs& pairs)
      : positions_(pairs.positions), count_(pairs.count) {}
  bool more() const { return index_ < count_; }
  uint64_t head() const { return positions_[index_]; }
  size_t index() const { return index_; }
  void advance(bool step) { index_ += step; }
  bool valid() const { return true; }

 private:
  const uint64_t* positions_;
  size_t count_;
  size_t index_ = 0;
};

// Reads a varint ahead of the one in use (the next gap), so that advance,
// called once per merge step whether or not this side moves, is branch-free
// for gaps under 2^14 (one or two bytes: the common case, and the length
// branch mispredicted per pair in decodePacked); longer varints and the
// end of the stream take a checked path. A fault (truncated, over 64 bits,
// past the universe) ends the positions early and clears valid(); the
// caller then rejects the message, so a fault need not be exact about
// which entry caused it. Positions are < universe <= 2^63 while valid, and
// head() ascends even across a fault (a fault only stops the stream).
class GapCodedPositions {
 public:
  GapCodedPositions(const GapCodedPairs& pairs, uint64_t universe)
      : data_(pairs.varints), end_(pairs.varintBytes), count_(pairs.count), universe_(universe) {
    // head_ + 1 wraps to 0: the first varint is the first position itself.
    index_ = SIZE_MAX;
    if (count_ > 0) {
      readAheadSlow();
      advance(true);
    } else {
      index_ = 0;
    }
  }
  bool more() const { return index_ < count_; }
  uint64_t head() const { return head_; }
  size_t index() const { return index_; }
  void advance(bool step) {
    const uint64_t mask = 0 - static_cast<uint64_t>(step);
    index_ += step;
    head_ += (aheadGap_ + 1) & mask;
    at_ += aheadBytes_ & mask;
    // (index_ + 1 < count_: past the last entry lie the values, or stray
    // bytes that valid() must see as such.)
    if (index_ + 1 < count_ && at_ + 2 <= end_ && (data_[at_] & data_[at_ + 1] & 0x80) == 0) {
      const uint64_t low = data_[at_], high = data_[at_ + 1];
      const uint64_t twoBytes = low >> 7;
      aheadGap_ = (low & 0x7f) | ((high << 7) & (0 - twoBytes));
      aheadBytes_ = 1 + twoBytes;
    } else if (step) {
      readAheadSlow();  // (unmoved: the read-ahead is still the one at at_)
    }
  }
  // Whether every varint was read, all within the universe, with no byte
  // left over: call once the merge has consumed all positions.
  bool valid() const { return !fault_ && index_ == count_ && at_ == end_ && positionsInUniverse(); }

 private:
  bool positionsInUniverse() const {
    // Gaps read by the fast path are unchecked: the last position bounds
    // them. Past the last entry head_ is that position + 1.
    return count_ == 0 || head_ - 1 < universe_;
  }
  void readAheadSlow() {
    // index_ + 1: the entry the read-ahead is for (the first when index_
    // wraps). The last entry's read-ahead reads nothing.
    if (index_ + 1 >= count_) {
      aheadGap_ = 0;
      aheadBytes_ = 0;
      return;
    }
    uint64_t gap = 0;
    size_t at = at_;
    for (size_t shift = 0;; shift += 7) {
      if (at == end_ || shift / 7 == kMaxVarintBytes || (shift == 63 && data_[at] > 1))
        return stop();
      const unsigned char byte = data_[at++];
      gap |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    const uint64_t next = head_ + 1;  // 0 for the first
    if (next >= universe_ || gap >= universe_ - next) return stop();
    aheadGap_ = gap;
    aheadBytes_ = at - at_;
  }
  // Ends the stream after the current entry, marking the message bad.
  void stop() {
    fault_ = true;
    count_ = index_ + 1;
    aheadGap_ = 0;
    aheadBytes_ = 0;
  }

  static constexpr size_t kMaxVarintBytes = 10;  // ceil(64 / 7)
  const unsigned char* data_;
  size_t end_;
  size_t count_;
  uint64_t universe_;
  size_t index_;
  uint64_t head_ = UINT64_MAX;
  size_t at_ = 0;  // the read-ahead varint's offset
  uint64_t aheadGap_ = 0;
  size_t aheadBytes_ = 0;
  bool fault_ = false;
};

}  // namespace spccl::kernels

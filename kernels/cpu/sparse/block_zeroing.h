// Writing a sparse stream of values into a dense tensor in one sequential
// pass: the zeros between non-zeros are written a block at a time, just
// before the block's first value, so each cache line is written once (the
// block is still in L1 when its values land) and there is one memset per
// block instead of one per gap (a call per gap was most of densify's time
// at a few per cent density).
#pragma once

#include <cstddef>
#include <cstring>

namespace spccl::kernels {

template <size_t B>
class BlockZeroingWriter {
 public:
  // 1024 elements: 4 KiB of f32, well inside L1.
  static constexpr size_t kBlock = 1024;

  BlockZeroingWriter(unsigned char* dense, size_t count) : dense_(dense), count_(count) {}

  // Positions must ascend; each < count.
  void put(size_t at, const unsigned char* value) {
    if (at >= zeroedEnd_) zeroThrough(at);
    std::memcpy(dense_ + at * B, value, B);
  }

  // Zeroes what no put reached.
  void finish() {
    if (count_ > zeroedEnd_) std::memset(dense_ + zeroedEnd_ * B, 0, (count_ - zeroedEnd_) * B);
    zeroedEnd_ = count_;
  }

 private:
  void zeroThrough(size_t at) {
    size_t end = (at / kBlock + 1) * kBlock;
    if (end > count_) end = count_;
    std::memset(dense_ + zeroedEnd_ * B, 0, (end - zeroedEnd_) * B);
    zeroedEnd_ = end;
  }

  unsigned char* dense_;
  size_t count_;
  size_t zeroedEnd_ = 0;  // elements [0, zeroedEnd_) are written or zeroed
};

}  // namespace spccl::kernels

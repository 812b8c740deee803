// The split of [0, M) into n contiguous ranges [p*M/n, (p+1)*M/n) used by
// the Contiguous partition (over index space) and the Permutation partition
// (over pi-space). Products go through 128 bits: p*M overflows 64 bits for
// large tensors.
#pragma once

#include <cstdint>

namespace spccl::sparse {

class EvenRanges {
 public:
  EvenRanges(uint64_t universe, int parts) : universe_(universe), parts_(parts) {}

  uint64_t start(int p) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(p) * universe_ /
                                 static_cast<unsigned>(parts_));
  }
  uint64_t size(int p) const { return start(p + 1) - start(p); }

  // The p with start(p) <= y < start(p+1), y < M. floor(y*n/M) has
  // start() <= y, and the true part is at most one further: a part can
  // begin at y itself when M/n is not an integer.
  int partOf(uint64_t y) const {
    int p = static_cast<int>(static_cast<unsigned __int128>(y) * static_cast<unsigned>(parts_) /
                             universe_);
    while (p + 1 < parts_ && start(p + 1) <= y) ++p;
    return p;
  }

 private:
  uint64_t universe_;
  int parts_;
};

}  // namespace spccl::sparse

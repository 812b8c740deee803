// The split of [0, M) into n contiguous ranges [p*M/n, (p+1)*M/n) used by
// the Contiguous partition (over index space) and the Permutation partition
// (over pi-space). The n + 1 boundaries are computed once (in 128 bits:
// p*M overflows 64 bits for large tensors), so the per-index lookups do no
// wide division.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/device_sparse/partition_math.h"

namespace spccl::sparse {

class EvenRanges {
 public:
  EvenRanges(uint64_t universe, int parts)
      : starts_(static_cast<size_t>(parts) + 1),
        partsPerElement_(
            universe == 0 ? 0.0 : static_cast<double>(parts) / static_cast<double>(universe)) {
    for (size_t p = 0; p < starts_.size(); ++p) {
      starts_[p] =
          kernels::device_sparse::evenRangeStart(universe, static_cast<uint64_t>(parts), p);
    }
  }

  uint64_t start(int p) const { return starts_[static_cast<size_t>(p)]; }
  uint64_t size(int p) const { return start(p + 1) - start(p); }

  // The p with start(p) <= y < start(p+1), y < M.
  int partOf(uint64_t y) const {
    return kernels::device_sparse::evenRangeOf(y, static_cast<int>(starts_.size()) - 1,
                                               partsPerElement_,
                                               [this](int p) { return start(p); });
  }

 private:
  std::vector<uint64_t> starts_;  // parts + 1 boundaries; starts_[parts] = M
  double partsPerElement_;
};

}  // namespace spccl::sparse

// Bijective hash partition (docs/algorithms.md 2.6 (1)): part p owns the
// range [p*M/n, (p+1)*M/n) of pi-space for a keyed permutation pi, so
// I_p[t] = pi^-1(p*M/n + t) is computed rather than stored. An index's
// owner is as pseudo-random as under h0 (same balance), yet no O(M) table
// is needed and positions exist on both push and pull.
#include <memory>

#include "sparse/even_ranges.h"
#include "sparse/feistel_permutation.h"
#include "sparse/partition_kinds.h"

namespace spccl::sparse {
namespace {

class PermutationPartition final : public IndexPartition {
 public:
  PermutationPartition(uint64_t universe, int parts, uint64_t seed)
      : IndexPartition(universe, parts),
        seed_(seed),
        pi_(universe, seed),
        ranges_(universe, parts) {}

  PartitionKind kind() const override { return PartitionKind::Permutation; }
  int owner(uint64_t idx) const override { return ranges_.partOf(pi_.forward(idx)); }
  uint64_t position(uint64_t idx) const override {
    const uint64_t y = pi_.forward(idx);
    return y - ranges_.start(ranges_.partOf(y));
  }
  uint64_t index(int p, uint64_t position) const override {
    return pi_.inverse(ranges_.start(p) + position);
  }
  kernels::device_sparse::PartitionMath deviceMath() const override {
    return kernels::device_sparse::partitionMath(kernels::device_sparse::kPermutationPartition,
                                                 universe_, parts_, seed_);
  }
  uint64_t partSize(int p) const override { return ranges_.size(p); }
  // The loops below run on a local copy of the permutation: out, owners
  // and positions might alias the members as far as the compiler knows, so
  // with pi_ it reloaded every round key and multiplier for every index
  // (twice the instructions).
  void indices(int p, const uint64_t* positions, size_t count, uint64_t* out) const override {
    const uint64_t start = ranges_.start(p);
    const FeistelPermutation pi = pi_;
    for (size_t i = 0; i < count; ++i) out[i] = pi.inverse(start + positions[i]);
  }
  void locate(const uint64_t* indices, size_t count, int* owners,
              uint64_t* positions) const override {
    const FeistelPermutation pi = pi_;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t y = pi.forward(indices[i]);
      owners[i] = ranges_.partOf(y);
      positions[i] = y - ranges_.start(owners[i]);
    }
  }

 private:
  uint64_t seed_;
  FeistelPermutation pi_;
  EvenRanges ranges_;
};

}  // namespace

std::shared_ptr<const IndexPartition> makePermutationPartition(uint64_t universe, int parts,
                                                               uint64_t seed) {
  return std::make_shared<PermutationPartition>(universe, parts, seed);
}

}  // namespace spccl::sparse

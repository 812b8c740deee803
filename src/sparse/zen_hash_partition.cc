// Zen's hash partition (section 3.2): owner p = h0(idx), and I_p = {idx :
// h0(idx) = p} sorted ascending (section 3.3.2, Algorithm 2), computed once
// per (M, n, seed) like Zen's offline tables. Two O(M) arrays make both
// directions O(1): the position of every index, and the members of every
// part laid end to end. Positions and members fit in 32 bits while M <= 2^32,
// which halves the tables (M = 16M: 128 MB instead of 256 MB).
//
// Positions are assigned by counting in one ascending sweep, so the push
// encoder and the pull decoder read the same table: no second formula that
// could disagree with the first.
#include <cstdint>
#include <memory>
#include <vector>

#include "sparse/partition_kinds.h"

namespace spccl::sparse {
namespace {

template <typename Word>
class ZenHashPartition final : public IndexPartition {
 public:
  ZenHashPartition(uint64_t universe, int parts, uint64_t seed)
      : IndexPartition(universe, parts),
        seed_(seed),
        positions_(std::make_unique_for_overwrite<Word[]>(universe)),
        members_(std::make_unique_for_overwrite<Word[]>(universe)),
        offsets_(static_cast<size_t>(parts) + 1, 0) {
    // Pass 1: owners, parked in positions_, and part sizes.
    for (uint64_t idx = 0; idx < universe; ++idx) {
      const int p = zenOwner(idx, seed, parts);
      positions_[idx] = static_cast<Word>(p);
      ++offsets_[static_cast<size_t>(p) + 1];
    }
    for (size_t p = 0; p < static_cast<size_t>(parts); ++p) offsets_[p + 1] += offsets_[p];
    // Pass 2: ascending indices give each part its members in order.
    std::vector<uint64_t> cursor(offsets_.begin(), offsets_.end() - 1);
    for (uint64_t idx = 0; idx < universe; ++idx) {
      const size_t p = positions_[idx];
      const uint64_t slot = cursor[p]++;
      members_[slot] = static_cast<Word>(idx);
      positions_[idx] = static_cast<Word>(slot - offsets_[p]);
    }
  }

  PartitionKind kind() const override { return PartitionKind::ZenHash; }
  int owner(uint64_t idx) const override { return zenOwner(idx, seed_, parts_); }
  uint64_t position(uint64_t idx) const override { return positions_[idx]; }
  uint64_t index(int p, uint64_t position) const override {
    return members_[offsets_[static_cast<size_t>(p)] + position];
  }
  void locate(const uint64_t* indices, size_t count, int* owners,
              uint64_t* positions) const override {
    for (size_t i = 0; i < count; ++i) {
      owners[i] = zenOwner(indices[i], seed_, parts_);
      positions[i] = positions_[indices[i]];
    }
  }
  kernels::device_sparse::PartitionMath deviceMath() const override {
    return kernels::device_sparse::partitionMath(kernels::device_sparse::kZenHashPartition,
                                                 universe_, parts_, seed_);
  }
  uint64_t partSize(int p) const override {
    return offsets_[static_cast<size_t>(p) + 1] - offsets_[static_cast<size_t>(p)];
  }

 private:
  uint64_t seed_;
  std::unique_ptr<Word[]> positions_;  // M entries: rank of idx within I_owner(idx)
  std::unique_ptr<Word[]> members_;    // M entries: I_0, I_1, ... each ascending
  std::vector<uint64_t> offsets_;      // parts + 1: I_p is members_[offsets_[p], offsets_[p+1])
};

}  // namespace

std::shared_ptr<const IndexPartition> makeZenHashPartition(uint64_t universe, int parts,
                                                           uint64_t seed) {
  if (universe <= (uint64_t{1} << 32)) {
    return std::make_shared<ZenHashPartition<uint32_t>>(universe, parts, seed);
  }
  return std::make_shared<ZenHashPartition<uint64_t>>(universe, parts, seed);
}

}  // namespace spccl::sparse

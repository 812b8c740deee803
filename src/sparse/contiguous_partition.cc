// Contiguous partition: part p owns [p*M/n, (p+1)*M/n) of index space, so
// positions are offsets into the range (block sparse baseline, tests).
#include <memory>

#include "sparse/even_ranges.h"
#include "sparse/partition_kinds.h"

namespace spccl::sparse {
namespace {

class ContiguousPartition final : public IndexPartition {
 public:
  ContiguousPartition(uint64_t universe, int parts)
      : IndexPartition(universe, parts), ranges_(universe, parts) {}

  PartitionKind kind() const override { return PartitionKind::Contiguous; }
  int owner(uint64_t idx) const override { return ranges_.partOf(idx); }
  uint64_t position(uint64_t idx) const override { return idx - ranges_.start(owner(idx)); }
  uint64_t index(int p, uint64_t position) const override { return ranges_.start(p) + position; }
  kernels::device_sparse::PartitionMath deviceMath() const override {
    return kernels::device_sparse::partitionMath(kernels::device_sparse::kContiguousPartition,
                                                 universe_, parts_, 0);
  }
  uint64_t partSize(int p) const override { return ranges_.size(p); }
  void indices(int p, const uint64_t* positions, size_t count, uint64_t* out) const override {
    const uint64_t start = ranges_.start(p);
    for (size_t i = 0; i < count; ++i) out[i] = start + positions[i];
  }
  void locate(const uint64_t* indices, size_t count, int* owners,
              uint64_t* positions) const override {
    for (size_t i = 0; i < count; ++i) {
      owners[i] = ranges_.partOf(indices[i]);
      positions[i] = indices[i] - ranges_.start(owners[i]);
    }
  }

 private:
  EvenRanges ranges_;
};

}  // namespace

std::shared_ptr<const IndexPartition> makeContiguousPartition(uint64_t universe, int parts) {
  return std::make_shared<ContiguousPartition>(universe, parts);
}

}  // namespace spccl::sparse

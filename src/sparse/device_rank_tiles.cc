#include "sparse/device_rank_tiles.h"

#include "base/check.h"

namespace spccl::sparse {

namespace ds = kernels::device_sparse;

bool DeviceRankTiles::samePartition(const ds::PartitionMath& a, const ds::PartitionMath& b) {
  return a.kind == b.kind && a.parts == b.parts && a.universe == b.universe && a.seed == b.seed;
}

spcclResult_t DeviceRankTiles::take(const ds::PartitionMath& math, device::CuStream stream,
                                    uint64_t bytes, device::CuDevicePtr* counts, bool* ready) {
  *ready = ready_ && stream == stream_ && samePartition(math, counted_);
  if (!*ready) {
    ready_ = false;  // (until markReady: the launches may fail)
    if (memory_ == nullptr || stream != stream_) {
      memory_ = std::make_unique<device::StreamMemory>(stream);
      stream_ = stream;
    }
    SPCCL_CHECK(memory_->reserve(bytes, "ZenHash's rank tiles"));
  }
  *counts = memory_->address();
  return spcclSuccess;
}

void DeviceRankTiles::markReady(const ds::PartitionMath& math) {
  counted_ = math;
  ready_ = true;
}

}  // namespace spccl::sparse

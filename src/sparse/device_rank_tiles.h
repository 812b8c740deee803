// ZenHash's rank tiles on the device (kernels/device_sparse/bucket_pairs.h,
// launches 1 and 2: h0's owner of every index of the universe counted per
// tile of kRankTile indices, then scanned). They depend on the partition
// alone (universe, parts, seed), so a communicator keeps them between its
// calls (SparseWorkspace::deviceRankTiles) and only its first Balanced
// Parallelism call over a ZenHash partition of a universe hashes that
// universe (issue 16; docs/gpu.md, "Balanced Parallelism's buckets on the
// device"). One partition at a time: another one recomputes them in place.
// Device memory: parts x ceil(M / kRankTile) x 8 bytes, kept until the
// communicator ends (1 MiB for 16 M elements over 8 ranks).
#pragma once

#include <cstdint>
#include <memory>

#include "device/cuda_driver.h"
#include "device/device_memory.h"
#include "kernels/device_sparse/partition_math.h"
#include "spccl.h"

namespace spccl::sparse {

class DeviceRankTiles {
 public:
  // Device memory for math's counts (`bytes`), allocated on `stream`,
  // spccl's own on which every bucket kernel runs; *ready: they hold
  // math's counts from an earlier call already. Otherwise they hold
  // nothing until markReady.
  spcclResult_t take(const kernels::device_sparse::PartitionMath& math, device::CuStream stream,
                     uint64_t bytes, device::CuDevicePtr* counts, bool* ready);
  // The launches that wrote math's counts, and their stream's
  // synchronisation, succeeded.
  void markReady(const kernels::device_sparse::PartitionMath& math);

 private:
  static bool samePartition(const kernels::device_sparse::PartitionMath& a,
                            const kernels::device_sparse::PartitionMath& b);

  std::unique_ptr<device::StreamMemory> memory_;
  device::CuStream stream_ = nullptr;
  bool ready_ = false;
  kernels::device_sparse::PartitionMath counted_{};
};

}  // namespace spccl::sparse

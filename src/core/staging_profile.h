// SPCCL_STAGING_REPORT=1: where a communicator's calls on device memory
// spend their time when staged whole through pinned host memory
// (docs/gpu.md, "How it runs"): the copies in, the call on the host (the
// CPU's reductions and the transports), the copies out. Printed by each
// rank when the communicator ends. On a stream the copies in count from
// the enqueue to the stream reaching the call, so they include the work
// queued before it: split calls that are synchronised one by one (the
// perf binaries). Calls cut into pieces overlap the parts, so they are
// counted, not split.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "migrate/migration_signature.h"
#include "runtime/frame.h"

namespace spccl {

// The calls that reduce their data on the device before it crosses to the
// host, each with its line in the report.
enum class DevicePart {
  kSparse,         // non-zeros extracted and scattered (core/device_sparse_call.h)
  kTokens,         // kept rows gathered and scattered (core/device_token_call.h)
  kCodecs,         // compressed codes made and decoded (core/device_compressed_call.h)
  kSparseBuckets,  // Balanced Parallelism's push buckets made on the device
                   // (sparse/device_buckets.h)
  kCount
};

class StagingProfile {
 public:
  // One whole-staged call: its three parts' seconds and bytes copied.
  void recordSplit(double copyInSeconds, double runSeconds, double copyOutSeconds, size_t bytesIn,
                   size_t bytesOut);
  // One call cut into pieces (its copies overlap the transfers).
  void recordOverlapped();
  // One collective of `type` that ran device-resident
  // (core/device_collective_call.h): nothing staged.
  void recordDeviceResident(CollType type);
  // One migration call that ran device-resident
  // (core/device_migrate_call.h): its own line ("migrate-broadcast").
  void recordDeviceResidentMigration(migrate::MigrationKind kind);
  // One call whose data moved between device and host in a reduced form
  // (DevicePart), with the bytes it copied each way.
  void recordDeviceCopies(DevicePart part, size_t bytesIn, size_t bytesOut);

  // One line on stderr (with SPCCL_STAGING_REPORT=1), naming the rank;
  // nothing when no call was staged.
  void printIfAsked(int rank, int nranks) const;

 private:
  mutable std::mutex mutex_;
  uint64_t splitCalls_ = 0;
  uint64_t overlappedCalls_ = 0;
  std::array<uint64_t, static_cast<size_t>(CollType::kCount)> deviceResidentCalls_{};
  std::array<uint64_t, 8> deviceResidentMigrations_{};  // by MigrationKind
  struct DeviceCopies {
    uint64_t calls = 0;
    uint64_t bytesIn = 0;
    uint64_t bytesOut = 0;
  };
  std::array<DeviceCopies, static_cast<size_t>(DevicePart::kCount)> deviceCopies_{};
  double copyInSeconds_ = 0;
  double runSeconds_ = 0;
  double copyOutSeconds_ = 0;
  uint64_t bytesIn_ = 0;
  uint64_t bytesOut_ = 0;
};

}  // namespace spccl

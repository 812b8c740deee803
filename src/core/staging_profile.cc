#include "core/staging_profile.h"

#include <cinttypes>
#include <cstdio>

#include "base/knobs.h"

namespace spccl {

void StagingProfile::recordSplit(double copyInSeconds, double runSeconds, double copyOutSeconds,
                                 size_t bytesIn, size_t bytesOut) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++splitCalls_;
  copyInSeconds_ += copyInSeconds;
  runSeconds_ += runSeconds;
  copyOutSeconds_ += copyOutSeconds;
  bytesIn_ += bytesIn;
  bytesOut_ += bytesOut;
}

void StagingProfile::recordOverlapped() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++overlappedCalls_;
}

void StagingProfile::recordDeviceResident(CollType type) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++deviceResidentCalls_[static_cast<size_t>(type)];
}

void StagingProfile::recordDeviceResidentMigration(migrate::MigrationKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++deviceResidentMigrations_.at(static_cast<size_t>(kind));
}

void StagingProfile::recordDeviceCopies(DevicePart part, size_t bytesIn, size_t bytesOut) {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceCopies& copies = deviceCopies_[static_cast<size_t>(part)];
  ++copies.calls;
  copies.bytesIn += bytesIn;
  copies.bytesOut += bytesOut;
}

namespace {

// How the report names a collective: "N all-reduce calls ran device-resident".
const char* reportName(CollType type) {
  switch (type) {
    case CollType::AllReduce:
      return "all-reduce";
    case CollType::ReduceScatter:
      return "reduce-scatter";
    case CollType::AllGather:
      return "all-gather";
    case CollType::Broadcast:
      return "broadcast";
    case CollType::Reduce:
      return "reduce";
    case CollType::AllToAll:
      return "all-to-all";
    case CollType::AllToAllv:
      return "all-to-allv";
    default:
      return collTypeName(type);
  }
}

// How the report names a migration call: one word, as the GPU stage
// scripts and the tests read the lines ("N migrate-broadcast calls ...").
const char* reportName(migrate::MigrationKind kind) {
  switch (kind) {
    case migrate::MigrationKind::Broadcast:
      return "migrate-broadcast";
    case migrate::MigrationKind::Reduce:
      return "migrate-reduce";
    case migrate::MigrationKind::MergedAllReduce:
      return "migrate-all-reduce";
    case migrate::MigrationKind::Scatter:
      return "scatter";
    case migrate::MigrationKind::Gather:
      return "gather";
    default:
      return "migration";
  }
}

// What the report says a DevicePart's calls did ("N sparse all-reduce
// calls extracted on the device: ...").
const char* reportWhat(DevicePart part) {
  switch (part) {
    case DevicePart::kSparse:
      return "sparse all-reduce calls extracted on the device";
    case DevicePart::kTokens:
      return "token all-reduce calls moved their kept rows on the device";
    case DevicePart::kSparseBuckets:
      return "sparse all-reduce calls bucketed their pairs by owner on the device";
    default:
      return "compressed all-reduce calls ran their codecs on the device";
  }
}

}  // namespace

void StagingProfile::printIfAsked(int rank, int nranks) const {
  if (knobInt("SPCCL_STAGING_REPORT") == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // One line per collective, each one write (ranks may share a stderr).
  auto printResident = [rank, nranks](const auto& calls, auto nameOf) {
    for (size_t index = 0; index < calls.size(); ++index)
      if (calls[index] > 0)
        std::fprintf(stderr,
                     "spccl staging report, rank %d/%d: %" PRIu64
                     " %s calls ran device-resident (CUDA IPC, nothing staged)\n",
                     rank, nranks, calls[index], nameOf(index));
  };
  printResident(deviceResidentCalls_,
                [](size_t type) { return reportName(static_cast<CollType>(type)); });
  printResident(deviceResidentMigrations_,
                [](size_t kind) { return reportName(static_cast<migrate::MigrationKind>(kind)); });
  for (size_t part = 0; part < deviceCopies_.size(); ++part) {
    const DeviceCopies& copies = deviceCopies_[part];
    if (copies.calls > 0)
      std::fprintf(stderr,
                   "spccl staging report, rank %d/%d: %" PRIu64 " %s: %" PRIu64
                   " bytes copied in, %" PRIu64 " bytes copied out\n",
                   rank, nranks, copies.calls, reportWhat(static_cast<DevicePart>(part)),
                   copies.bytesIn, copies.bytesOut);
  }
  if (splitCalls_ == 0 && overlappedCalls_ == 0) return;
  const double total = copyInSeconds_ + runSeconds_ + copyOutSeconds_;
  auto share = [total](double part) { return total > 0 ? 100 * part / total : 0.0; };
  // One write, so that ranks sharing a stderr do not cut into each other.
  std::fprintf(stderr,
               "spccl staging report, rank %d/%d: %" PRIu64
               " calls on device memory staged whole: copies in %.6f s (%.1f %%, %" PRIu64
               " bytes), on the host %.6f s (%.1f %%), copies out %.6f s (%.1f %%, %" PRIu64
               " bytes); %" PRIu64 " more cut into pieces, not split\n",
               rank, nranks, splitCalls_, copyInSeconds_, share(copyInSeconds_), bytesIn_,
               runSeconds_, share(runSeconds_), copyOutSeconds_, share(copyOutSeconds_), bytesOut_,
               overlappedCalls_);
}

}  // namespace spccl

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

void StagingProfile::recordDeviceResidentMigration(CollType type) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++deviceResidentMigrations_[static_cast<size_t>(type)];
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

// What the report says a DevicePart's calls did ("N sparse all-reduce
// calls extracted on the device: ...").
const char* reportWhat(DevicePart part) {
  switch (part) {
    case DevicePart::kSparse:
      return "sparse all-reduce calls extracted on the device";
    case DevicePart::kTokens:
      return "token all-reduce calls moved their kept rows on the device";
    default:
      return "compressed all-reduce calls ran their codecs on the device";
  }
}

}  // namespace

void StagingProfile::printIfAsked(int rank, int nranks) const {
  if (knobInt("SPCCL_STAGING_REPORT") == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // One line per collective, each one write (ranks may share a stderr).
  // The migration calls as "migrate-<collective>": one word, as the
  // GPU stage scripts and the tests read the lines.
  auto printResident = [rank, nranks](const auto& calls, const char* prefix) {
    for (size_t type = 0; type < calls.size(); ++type)
      if (calls[type] > 0)
        std::fprintf(stderr,
                     "spccl staging report, rank %d/%d: %" PRIu64
                     " %s%s calls ran device-resident (CUDA IPC, nothing staged)\n",
                     rank, nranks, calls[type], prefix, reportName(static_cast<CollType>(type)));
  };
  printResident(deviceResidentCalls_, "");
  printResident(deviceResidentMigrations_, "migrate-");
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

#include "sparse/sparse_stats.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "base/check.h"

namespace spccl::sparse {

double imbalanceRatio(std::span<const uint64_t> sizes) {
  uint64_t total = 0, largest = 0;
  for (uint64_t s : sizes) {
    total += s;
    largest = std::max(largest, s);
  }
  if (total == 0) return 1.0;
  return static_cast<double>(largest) * static_cast<double>(sizes.size()) /
         static_cast<double>(total);
}

spcclResult_t copyStatsOut(const SparseCallStats& from, spcclSparseStats_t* to) {
  const size_t minimum = offsetof(spcclSparseStats_t, calls) + sizeof(uint64_t);
  if (to->size < minimum)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "spcclSparseGetStats: stats->size %zu is too small (at least %zu); set it "
                      "to sizeof(spcclSparseStats_t)",
                      to->size, minimum);
  spcclSparseStats_t full;
  std::memset(&full, 0, sizeof(full));
  full.size = std::min(to->size, sizeof(full));
  full.calls = from.calls;
  full.algorithm = from.algorithm;
  std::snprintf(full.reason, sizeof(full.reason), "%s", from.reason.c_str());
  for (int a = 0; a < spcclSparseNumAlgorithms; ++a)
    full.predictedSeconds[a] = from.predictedSeconds[a];
  full.density = from.density;
  full.gamma = from.gamma;
  full.pushImbalance = from.pushImbalance;
  full.pullImbalance = from.pullImbalance;
  full.bytesSent = from.bytesSent;
  full.bytesReceived = from.bytesReceived;
  full.predictedBytesSent = from.predictedBytesSent;
  full.measuredSeconds = from.measuredSeconds;
  std::memcpy(to, &full, full.size);
  return spcclSuccess;
}

}  // namespace spccl::sparse

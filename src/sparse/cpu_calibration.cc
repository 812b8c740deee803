#include "sparse/cpu_calibration.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "base/knobs.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {

namespace {

// Two sets of 2^19 f32 pairs (6 MB each) over positions 2i and 3i: a third
// of each set's positions are common, as in a merge of overlapping ranks.
constexpr size_t kPairsPerSet = size_t{1} << 19;
constexpr int kRepetitions = 5;

SparseSet strideSet(uint64_t stride) {
  SparseSet set;
  set.positions.resize(kPairsPerSet);
  set.values.resize(kPairsPerSet * sizeof(float));
  auto* values = reinterpret_cast<float*>(set.values.data());
  for (size_t i = 0; i < kPairsPerSet; ++i) {
    set.positions[i] = stride * i;
    values[i] = 1.0f + static_cast<float>(i & 7);
  }
  return set;
}

// One machine's cores, whatever network namespace or container the rank
// runs in; the hostname where the kernel does not say.
uint64_t machineId() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(file, id);
  if (id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    id = host;
  }
  return std::hash<std::string>{}(id);
}

int usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// What each rank contributes to the CPU term: its knob's value (NaN when
// the knob is not a number >= 0) and where it runs.
struct RankCpu {
  double pairSeconds;
  uint64_t machine;
  uint64_t cpus;
};

// Ranks on the most crowded machine over the CPUs they may run on, >= 1.
double mostRanksPerCpu(const std::vector<RankCpu>& ranks) {
  std::map<uint64_t, std::pair<int, uint64_t>> ranksAndCpus;  // by machine
  for (const RankCpu& rank : ranks) {
    auto& [count, cpus] = ranksAndCpus[rank.machine];
    ++count;
    cpus = std::max(cpus, rank.cpus);
  }
  double sharing = 1.0;
  for (const auto& [machine, share] : ranksAndCpus)
    sharing =
        std::max(sharing, static_cast<double>(share.first) / static_cast<double>(share.second));
  return sharing;
}

}  // namespace

double timeMergePairs() {
  const SparseSet lower = strideSet(2), higher = strideSet(3);
  SparseSet out;
  std::vector<double> seconds;
  for (int i = 0; i <= kRepetitions; ++i) {  // the first pages in `out`
    const double start = monotonicSeconds();
    mergeSets(spcclFloat32, sizeof(float), lower, higher, &out);
    if (i > 0) seconds.push_back(monotonicSeconds() - start);
  }
  std::nth_element(seconds.begin(), seconds.begin() + kRepetitions / 2, seconds.end());
  return seconds[kRepetitions / 2] / (2.0 * static_cast<double>(kPairsPerSet));
}

spcclResult_t agreePairSeconds(CollContext& ctx, double* pairSeconds) {
  const std::string knob = knobString("SPCCL_SPARSE_CPU_NS_PER_PAIR");
  char* end = nullptr;
  const double ns = std::strtod(knob.c_str(), &end);
  const bool valid = end != knob.c_str() && *end == '\0' && ns >= 0 && std::isfinite(ns);
  // A bad value still joins the all-gather (as NaN), so every rank fails
  // together instead of leaving the others waiting.
  const RankCpu mine{valid ? ns * 1e-9 : std::nan(""), machineId(),
                     static_cast<uint64_t>(usableCpus())};
  std::vector<RankCpu> all(ctx.nranks());
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), all.data()));
  double slowest = 0;
  for (int r = 0; r < ctx.nranks(); ++r) {
    if (std::isnan(all[r].pairSeconds))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "SPCCL_SPARSE_CPU_NS_PER_PAIR on rank %d is not a number >= 0 (ns per pair "
                        "of merge work on one core; 0: no CPU term)%s%s",
                        r, r == ctx.rank() ? ": " : "", r == ctx.rank() ? knob.c_str() : "");
    slowest = std::max(slowest, all[r].pairSeconds);
  }
  *pairSeconds = slowest * mostRanksPerCpu(all);
  return spcclSuccess;
}

}  // namespace spccl::sparse

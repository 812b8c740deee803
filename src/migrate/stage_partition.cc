#include <algorithm>
#include <limits>

#include "migrate/stage_balancing.h"

namespace spccl::migrate {

double stageMaximum(std::span<const double> weights, std::span<const int> stageOfLayer,
                    int nStages) {
  std::vector<double> sums(static_cast<size_t>(nStages), 0.0);
  for (size_t i = 0; i < weights.size(); ++i) sums[stageOfLayer[i]] += weights[i];
  return *std::max_element(sums.begin(), sums.end());
}

bool optimalPartition(std::span<const double> weights, std::span<const double> memory, int nStages,
                      double memCapacity, StageOfLayer* out) {
  const int n = static_cast<int>(weights.size());
  std::vector<double> weightPrefix(n + 1, 0.0), memoryPrefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) {
    weightPrefix[i + 1] = weightPrefix[i] + weights[i];
    memoryPrefix[i + 1] = memoryPrefix[i] + (memory.empty() ? 0.0 : memory[i]);
  }
  constexpr double kInfeasible = std::numeric_limits<double>::infinity();
  // best[s][i]: smallest maximum over s stages holding layers [0, i);
  // cut[s][i]: where the last of them starts.
  std::vector<std::vector<double>> best(nStages + 1, std::vector<double>(n + 1, kInfeasible));
  std::vector<std::vector<int>> cut(nStages + 1, std::vector<int>(n + 1, -1));
  best[0][0] = 0;
  for (int s = 1; s <= nStages; ++s) {
    for (int i = s; i <= n - (nStages - s); ++i) {
      for (int j = i - 1; j >= s - 1; --j) {
        if (memoryPrefix[i] - memoryPrefix[j] > memCapacity) break;  // longer stages only grow
        if (best[s - 1][j] == kInfeasible) continue;
        const double candidate = std::max(best[s - 1][j], weightPrefix[i] - weightPrefix[j]);
        if (candidate < best[s][i]) {
          best[s][i] = candidate;
          cut[s][i] = j;
        }
      }
    }
  }
  if (best[nStages][n] == kInfeasible) return false;
  out->assign(static_cast<size_t>(n), 0);
  for (int s = nStages, i = n; s >= 1; --s) {
    const int j = cut[s][i];
    for (int layer = j; layer < i; ++layer) (*out)[layer] = s - 1;
    i = j;
  }
  return true;
}

}  // namespace spccl::migrate

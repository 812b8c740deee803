#include "migrate/stage_balancing.h"

namespace spccl::migrate {

int repackFirstFit(std::span<const double> memory, std::span<const int> stageOfLayer, int nStages,
                   double memCapacity, int targetStages, StageOfLayer* out) {
  std::vector<double> used(static_cast<size_t>(nStages), 0.0);
  for (size_t i = 0; i < stageOfLayer.size(); ++i) used[stageOfLayer[i]] += memory[i];
  // owner[s]: the surviving old stage that old stage s was merged into.
  std::vector<int> owner(static_cast<size_t>(nStages));
  for (int s = 0; s < nStages; ++s) owner[s] = s;
  std::vector<int> alive;  // old stage ids that still head a stage, in order
  alive.reserve(static_cast<size_t>(nStages));
  for (int s = 0; s < nStages; ++s) alive.push_back(s);
  std::vector<double> aliveUsed = used;
  bool merged = true;
  while (merged && (targetStages <= 0 || static_cast<int>(alive.size()) > targetStages)) {
    merged = false;
    for (size_t k = 0; k + 1 < alive.size(); ++k) {
      if (aliveUsed[k] + aliveUsed[k + 1] > memCapacity) continue;
      // First fit: stage k + 1's layers move onto stage k, freeing a rank.
      const int absorbed = alive[k + 1];
      for (int& o : owner)
        if (o == absorbed) o = alive[k];
      aliveUsed[k] += aliveUsed[k + 1];
      alive.erase(alive.begin() + static_cast<long>(k) + 1);
      aliveUsed.erase(aliveUsed.begin() + static_cast<long>(k) + 1);
      merged = true;
      break;
    }
  }
  std::vector<int> newIndex(static_cast<size_t>(nStages), -1);
  for (size_t k = 0; k < alive.size(); ++k) newIndex[alive[k]] = static_cast<int>(k);
  out->resize(stageOfLayer.size());
  for (size_t i = 0; i < stageOfLayer.size(); ++i) (*out)[i] = newIndex[owner[stageOfLayer[i]]];
  return static_cast<int>(alive.size());
}

}  // namespace spccl::migrate

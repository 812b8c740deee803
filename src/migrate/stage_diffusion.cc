#include <algorithm>
#include <cmath>
#include <numeric>

#include "migrate/stage_balancing.h"

namespace spccl::migrate {

int diffusionRoundBound(int nStages, double convergence) {
  const double n = std::max(2, nStages);  // log N vanishes at N = 1
  const double logN = std::log2(n);
  const double first = n * n * std::log2(n * n / convergence) * logN;
  const double second = n * n * logN / convergence;
  return static_cast<int>(std::ceil(std::min(first, second)));
}

namespace {

struct Stages {
  std::span<const double> costs;
  std::span<const double> memory;
  StageOfLayer& stageOfLayer;
  std::vector<double> load, used;
  std::vector<int> first, last;  // layer range of each stage (non-empty)

  Stages(std::span<const double> c, std::span<const double> m, int nStages, StageOfLayer& of)
      : costs(c),
        memory(m),
        stageOfLayer(of),
        load(nStages, 0),
        used(nStages, 0),
        first(nStages, -1),
        last(nStages, -1) {
    for (int i = 0; i < static_cast<int>(of.size()); ++i) {
      const int s = of[i];
      load[s] += c[i];
      used[s] += m.empty() ? 0 : m[i];
      if (first[s] < 0) first[s] = i;
      last[s] = i;
    }
  }
  double memoryOf(int layer) const { return memory.empty() ? 0 : memory[layer]; }
  void move(int layer, int from, int to) {
    load[from] -= costs[layer];
    load[to] += costs[layer];
    used[from] -= memoryOf(layer);
    used[to] += memoryOf(layer);
    stageOfLayer[layer] = to;
    if (to > from) {
      last[from] = layer - 1;
      first[to] = layer;
    } else {
      first[from] = layer + 1;
      last[to] = layer;
    }
  }
};

// Moves boundary layers across the boundary between stages left and
// left + 1 while that lowers the pair's maximum by more than `margin`.
int balanceBoundary(Stages& st, int left, double memCapacity, double margin) {
  int moves = 0;
  for (;;) {
    const int right = left + 1;
    const bool leftHeavier = st.load[left] > st.load[right];
    const int from = leftHeavier ? left : right, to = leftHeavier ? right : left;
    if (st.first[from] == st.last[from]) return moves;  // a stage keeps one layer
    const int layer = leftHeavier ? st.last[left] : st.first[right];
    // max(A - w, B + w) < A  <=>  B + w < A.
    if (st.load[to] + st.costs[layer] >= st.load[from] - margin) return moves;
    if (st.used[to] + st.memoryOf(layer) > memCapacity) return moves;
    st.move(layer, from, to);
    ++moves;
  }
}

}  // namespace

int diffuse(std::span<const double> costs, std::span<const double> memory, int nStages,
            double memCapacity, double convergence, int maxRounds, StageOfLayer* stageOfLayer,
            bool* converged) {
  Stages st(costs, memory, nStages, *stageOfLayer);
  const double mean = std::accumulate(costs.begin(), costs.end(), 0.0) / nStages;
  const double margin = convergence * mean;
  *converged = false;
  int rounds = 0;
  while (rounds < maxRounds) {
    ++rounds;
    int moves = 0;
    for (int left = 0; left + 1 < nStages; ++left)
      moves += balanceBoundary(st, left, memCapacity, margin);
    for (int left = nStages - 2; left >= 0; --left)
      moves += balanceBoundary(st, left, memCapacity, margin);
    if (moves == 0) {
      *converged = true;
      break;
    }
  }
  return rounds;
}

}  // namespace spccl::migrate

#include "compress/partition_planner.h"

#include <algorithm>
#include <cmath>

namespace spccl::compress {

namespace {

constexpr int kChoices = 3;

// SplitOrMerge: micro-batch i (1-based) of the next layer waits for the
// communication of the previous layer's micro-batch ceil(i / r),
// r = k / len(preE_cm): a split repeats an end, a merge takes the last of
// the merged ones.
std::vector<double> splitOrMerge(const std::vector<double>& commEnds, int k) {
  const double r = static_cast<double>(k) / static_cast<double>(commEnds.size());
  std::vector<double> out(static_cast<size_t>(k));
  for (int i = 1; i <= k; ++i) {
    const size_t s = static_cast<size_t>(std::ceil(i / r - 1e-9));
    out[static_cast<size_t>(i - 1)] = commEnds[std::min(s, commEnds.size()) - 1];
  }
  return out;
}

// Which of two ends is better: the earlier last communication, then the
// earlier compute end (the paper's "min" of CalParEnd's pair).
bool earlier(const PipelineEnd& a, const PipelineEnd& b) {
  if (a.commEnds.back() != b.commEnds.back()) return a.commEnds.back() < b.commEnds.back();
  return a.computeEnd < b.computeEnd;
}

}  // namespace

PipelineEnd nextLayerEnd(const PipelineEnd& previous, double tCompute, double tComm, int k) {
  const std::vector<double> ready = splitOrMerge(previous.commEnds, k);
  PipelineEnd end;
  end.commEnds.resize(static_cast<size_t>(k));
  double lastCompute = previous.computeEnd;
  double lastComm = ready.back();  // line 23
  for (int i = 0; i < k; ++i) {
    lastCompute = std::max(ready[static_cast<size_t>(i)], lastCompute) + tCompute;
    lastComm = std::max(lastCompute, lastComm) + tComm;
    end.commEnds[static_cast<size_t>(i)] = lastComm;
  }
  end.computeEnd = lastCompute;
  return end;
}

double microCompute(const LayerTimes& layer, int k) { return layer.computeSeconds / k; }
double microComm(const LayerTimes& layer, double alpha, int k) {
  return alpha + layer.commSeconds / k;
}

double simulatePlan(std::span<const LayerTimes> layers, double alpha, std::span<const int> sizes) {
  PipelineEnd end;
  for (size_t l = 0; l < layers.size(); ++l)
    end = nextLayerEnd(end, microCompute(layers[l], sizes[l]),
                       microComm(layers[l], alpha, sizes[l]), sizes[l]);
  return end.commEnds.back();
}

// Lines 5-17: for each layer and each size i, the best predecessor size j
// (par[l][i]) and the end it gives; then backtracking from the best final
// size. O(L) in the number of layers.
double planPartitions(std::span<const LayerTimes> layers, double alpha, std::vector<int>* sizes) {
  const size_t L = layers.size();
  sizes->assign(L, 1);
  if (L == 0) return 0.0;
  std::vector<PipelineEnd> ends(kChoices);  // fE: the start, for every j
  std::vector<std::vector<int>> par(L, std::vector<int>(kChoices, 0));
  for (size_t l = 0; l < L; ++l) {
    std::vector<PipelineEnd> next(kChoices);
    for (int i = 0; i < kChoices; ++i) {
      const int k = kPartitionSizes[i];
      const double tCompute = microCompute(layers[l], k), tComm = microComm(layers[l], alpha, k);
      for (int j = 0; j < (l == 0 ? 1 : kChoices); ++j) {
        PipelineEnd candidate = nextLayerEnd(ends[static_cast<size_t>(j)], tCompute, tComm, k);
        if (j == 0 || earlier(candidate, next[static_cast<size_t>(i)])) {
          next[static_cast<size_t>(i)] = std::move(candidate);
          par[l][static_cast<size_t>(i)] = j;
        }
      }
    }
    ends = std::move(next);
  }
  int p = 0;
  for (int i = 1; i < kChoices; ++i)
    if (earlier(ends[static_cast<size_t>(i)], ends[static_cast<size_t>(p)])) p = i;
  const double best = ends[static_cast<size_t>(p)].commEnds.back();
  for (size_t l = L; l-- > 0;) {
    (*sizes)[l] = kPartitionSizes[p];
    p = par[l][static_cast<size_t>(p)];
  }
  return best;
}

}  // namespace spccl::compress

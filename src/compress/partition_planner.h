// AccTFM Algorithm 1 (section 4.2.2): per-layer micro-batch counts from
// {1, 2, 4}, by dynamic programming over layers, so that computation and
// communication of successive micro-batches overlap. The timing model is
// the algorithm's CalParEnd / SplitOrMerge, kept separate so that tests
// can evaluate any plan (e.g. every plan, by brute force).
#pragma once

#include <span>
#include <vector>

namespace spccl::compress {

struct LayerTimes {
  double computeSeconds = 0;  // whole batch
  double commSeconds = 0;     // whole batch, bandwidth term only
};

// Completion time of a micro-batch schedule so far: the last micro-batch's
// compute end (preE_cp) and each micro-batch's communication end (preE_cm).
struct PipelineEnd {
  double computeEnd = 0;
  std::vector<double> commEnds{0.0};
};

constexpr int kPartitionSizes[] = {1, 2, 4};

// CalParEnd (lines 19-28) with SplitOrMerge (lines 30-36): the next layer
// split into k micro-batches of tCompute and tComm each.
PipelineEnd nextLayerEnd(const PipelineEnd& previous, double tCompute, double tComm, int k);

// Per micro-batch times of a layer split k ways: t_cp = T_cp / k,
// t_cm = alpha + T_cm / k (Eq. 3 with the message k times smaller).
double microCompute(const LayerTimes& layer, int k);
double microComm(const LayerTimes& layer, double alpha, int k);

// The plan's predicted completion: the last communication's end.
double simulatePlan(std::span<const LayerTimes> layers, double alpha, std::span<const int> sizes);

// Algorithm 1: sizes[l] in {1, 2, 4}; returns the predicted completion.
double planPartitions(std::span<const LayerTimes> layers, double alpha, std::vector<int>* sizes);

}  // namespace spccl::compress

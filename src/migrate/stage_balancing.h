// DynPipe's stage rebalancing (sections 3.4-3.5): contiguous
// runs of layers onto pipeline stages. Pure functions of per-layer costs
// and memory, so every rank of a pipeline computes the same layout; the
// layer moves a new layout implies are point-to-point transfers.
#pragma once

#include <span>
#include <vector>

namespace spccl::migrate {

// Stage s holds layers [firstLayer[s], firstLayer[s + 1]).
using StageOfLayer = std::vector<int>;

double stageMaximum(std::span<const double> weights, std::span<const int> stageOfLayer,
                    int nStages);

// The partition into exactly nStages non-empty contiguous stages, each
// within memCapacity, that minimises the largest stage sum of `weights`
// (partition by time: weights are layer times; by parameters: parameter
// counts). Exact, by dynamic programming over prefix sums (DeepSpeed's
// binary search + probing finds the same optimum). False if no partition
// fits the memory.
bool optimalPartition(std::span<const double> weights, std::span<const double> memory, int nStages,
                      double memCapacity, StageOfLayer* out);

// Lemma 2's bound on the rounds of decentralised diffusion,
// O(min{N^2 log(SN / gamma) log N, SN log N / gamma}), with N = S = nStages
// and the convergence factor gamma (constant factor 1, logs base 2).
int diffusionRoundBound(int nStages, double convergence);

// Diffusion: each round, every pair of neighbouring stages passes its
// boundary layers from the heavier to the lighter side while that lowers
// the pair's maximum by more than convergence * mean stage load (and the
// receiver's memory fits), sweeping forward then backward. Stops when a
// round moves nothing (converged) or at maxRounds; returns the rounds run
// and sets *converged.
int diffuse(std::span<const double> costs, std::span<const double> memory, int nStages,
            double memCapacity, double convergence, int maxRounds, StageOfLayer* stageOfLayer,
            bool* converged);

// First-fit re-packing (section 3.5): merges the first pair of neighbouring
// stages whose memory fits one stage, repeatedly, until none fits or
// targetStages (> 0) is reached. Returns the new stage count.
int repackFirstFit(std::span<const double> memory, std::span<const int> stageOfLayer, int nStages,
                   double memCapacity, int targetStages, StageOfLayer* out);

}  // namespace spccl::migrate

// API: DynPipe stage rebalancing (spcclStagePartition, spcclRepack). Local
// computations; arguments are checked here with messages naming them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "api/api_guard.h"
#include "base/check.h"
#include "base/log.h"
#include "migrate/stage_balancing.h"
#include "spccl.h"

using namespace spccl;
using namespace spccl::migrate;

namespace {

// Diffusion's convergence factor (Lemma 2's gamma): a move must lower the
// pair's maximum by more than this share of the mean stage load.
constexpr double kDiffusionConvergence = 1e-3;

spcclResult_t checkLayerValues(const double* values, int nLayers, const char* name,
                               const char* call) {
  for (int i = 0; i < nLayers; ++i)
    if (!std::isfinite(values[i]) || values[i] < 0)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: %s[%d] = %g must be finite and >= 0", call, name,
                        i, values[i]);
  return spcclSuccess;
}

spcclResult_t checkShape(const double* layerMem, int nLayers, int nStages, double memCapacity,
                         const char* call) {
  if (nLayers < 1)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: nLayers %d must be >= 1", call, nLayers);
  if (nStages < 1)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: nStages %d must be >= 1", call, nStages);
  if (nStages > nLayers)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: nStages %d exceeds nLayers %d (every stage needs a layer)", call,
                      nStages, nLayers);
  if (std::isnan(memCapacity) || memCapacity <= 0)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: memCapacity %g must be > 0", call, memCapacity);
  if (layerMem != nullptr) SPCCL_CHECK(checkLayerValues(layerMem, nLayers, "layerMem", call));
  return spcclSuccess;
}

// A partition given by the caller: non-decreasing, every stage non-empty.
spcclResult_t checkPartition(const int* stageOfLayer, int nLayers, int nStages, const char* name,
                             const char* call) {
  int expected = 0;
  for (int i = 0; i < nLayers; ++i) {
    const int s = stageOfLayer[i];
    if (s != expected && s != expected + 1)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: %s[%d] = %d: stages must be 0 .. %d in order, each holding a "
                        "contiguous non-empty run of layers",
                        call, name, i, s, nStages - 1);
    if (i == 0 && s != 0)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: %s[0] = %d, the first layer must be on stage 0",
                        call, name, s);
    expected = s;
  }
  if (expected != nStages - 1)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s uses stages 0 .. %d, not all %d", call, name,
                      expected, nStages);
  return spcclSuccess;
}

spcclResult_t checkStagesFit(std::span<const double> memory, std::span<const int> stageOfLayer,
                             int nStages, double memCapacity, const char* call) {
  std::vector<double> used(static_cast<size_t>(nStages), 0.0);
  for (size_t i = 0; i < memory.size(); ++i) used[stageOfLayer[i]] += memory[i];
  for (int s = 0; s < nStages; ++s)
    if (used[s] > memCapacity)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: stage %d needs %g, above memCapacity %g: no packing fits", call, s,
                        used[s], memCapacity);
  return spcclSuccess;
}

}  // namespace

extern "C" {

spcclResult_t spcclStagePartition(const double* layerCosts, const double* layerMem, int nLayers,
                                  int nStages, double memCapacity, spcclStageMethod_t method,
                                  int* stageOfLayer, spcclStagePartitionInfo_t* info) {
  return guardApi("spcclStagePartition", [&]() -> spcclResult_t {
    const char* call = "spcclStagePartition";
    clearThreadLastError();
    SPCCL_CHECK(checkShape(layerMem, nLayers, nStages, memCapacity, call));
    if (layerCosts == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: layerCosts is NULL", call);
    if (stageOfLayer == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: stageOfLayer is NULL", call);
    SPCCL_CHECK(checkLayerValues(layerCosts, nLayers, "layerCosts", call));
    if (static_cast<int>(method) < 0 || method >= spcclStageNumMethods)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: method %d is not a valid spcclStageMethod_t",
                        call, static_cast<int>(method));
    if (method == spcclStagePartitionByParameters && layerMem == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: layerMem is NULL; partition by parameters needs it", call);
    const std::span<const double> costs(layerCosts, static_cast<size_t>(nLayers));
    const std::span<const double> memory =
        layerMem != nullptr ? std::span<const double>(layerMem, static_cast<size_t>(nLayers))
                            : std::span<const double>();
    StageOfLayer layout;
    int rounds = 0;
    const int bound = diffusionRoundBound(nStages, kDiffusionConvergence);
    if (method == spcclStageDiffusion) {
      SPCCL_CHECK(checkPartition(stageOfLayer, nLayers, nStages, "stageOfLayer", call));
      layout.assign(stageOfLayer, stageOfLayer + nLayers);
      if (!memory.empty()) SPCCL_CHECK(checkStagesFit(memory, layout, nStages, memCapacity, call));
      bool converged = false;
      rounds = diffuse(costs, memory, nStages, memCapacity, kDiffusionConvergence, bound, &layout,
                       &converged);
      if (!converged)
        SPCCL_WARN("%s: diffusion stopped at Lemma 2's bound of %d rounds before converging", call,
                   bound);
    } else {
      const std::span<const double> weights = method == spcclStagePartitionByTime ? costs : memory;
      if (!optimalPartition(weights, memory, nStages, memCapacity, &layout))
        return SPCCL_FAIL(spcclInvalidArgument,
                          "%s: memCapacity %g is too small for any partition of %d layers into %d "
                          "stages",
                          call, memCapacity, nLayers, nStages);
    }
    std::copy(layout.begin(), layout.end(), stageOfLayer);
    if (info != nullptr) {
      info->maxStageCost = stageMaximum(costs, layout, nStages);
      info->maxStageMemory = memory.empty() ? 0.0 : stageMaximum(memory, layout, nStages);
      info->rounds = rounds;
      info->roundBound = method == spcclStageDiffusion ? bound : 0;
    }
    return spcclSuccess;
  });
}

spcclResult_t spcclRepack(const double* layerMem, const int* stageOfLayer, int nLayers, int nStages,
                          double memCapacity, int targetStages, int* newStageOfLayer,
                          int* newStages) {
  return guardApi("spcclRepack", [&]() -> spcclResult_t {
    const char* call = "spcclRepack";
    clearThreadLastError();
    SPCCL_CHECK(checkShape(layerMem, nLayers, nStages, memCapacity, call));
    if (layerMem == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: layerMem is NULL", call);
    if (stageOfLayer == nullptr || newStageOfLayer == nullptr || newStages == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: stageOfLayer, newStageOfLayer or newStages is NULL", call);
    if (targetStages < 0 || targetStages > nStages)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: targetStages %d must be 0 .. nStages %d", call,
                        targetStages, nStages);
    SPCCL_CHECK(checkPartition(stageOfLayer, nLayers, nStages, "stageOfLayer", call));
    const std::span<const double> memory(layerMem, static_cast<size_t>(nLayers));
    const std::span<const int> layout(stageOfLayer, static_cast<size_t>(nLayers));
    SPCCL_CHECK(checkStagesFit(memory, layout, nStages, memCapacity, call));
    StageOfLayer packed;
    const int count = repackFirstFit(memory, layout, nStages, memCapacity, targetStages, &packed);
    if (targetStages > 0 && count > targetStages)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: targetStages %d is out of reach within memCapacity %g (first fit "
                        "stops at %d stages)",
                        call, targetStages, memCapacity, count);
    std::copy(packed.begin(), packed.end(), newStageOfLayer);
    *newStages = count;
    return spcclSuccess;
  });
}

}  // extern "C"

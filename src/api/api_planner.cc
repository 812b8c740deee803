// API: spcclPlanPartitions (AccTFM Algorithm 1; partition_planner.h). A
// local computation: no communicator, no messages.
#include <cmath>
#include <vector>

#include "base/check.h"
#include "compress/partition_planner.h"
#include "spccl.h"

using namespace spccl;

extern "C" spcclResult_t spcclPlanPartitions(const spcclLayerCost* layers, int nLayers,
                                             double alpha, double beta, int backward, int* outSizes,
                                             double* outSeconds) {
  clearThreadLastError();
  const char* name = "spcclPlanPartitions";
  if (nLayers < 0)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: nLayers %d is negative", name, nLayers);
  if (nLayers > 0 && layers == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: layers is NULL", name);
  if (nLayers > 0 && outSizes == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: outSizes is NULL", name);
  if (!(alpha >= 0) || !std::isfinite(alpha))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: alpha %g is not a finite non-negative time", name,
                      alpha);
  if (!(beta >= 0) || !std::isfinite(beta))
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: beta %g is not a finite non-negative time per byte", name, beta);
  std::vector<compress::LayerTimes> times(static_cast<size_t>(nLayers));
  for (int l = 0; l < nLayers; ++l) {
    const spcclLayerCost& c = layers[l];
    if (!(c.computeSeconds >= 0) || !std::isfinite(c.computeSeconds) || !(c.commBytes >= 0) ||
        !std::isfinite(c.commBytes))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: layers[%d] has computeSeconds %g, commBytes %g; both must be finite "
                        "and non-negative",
                        name, l, c.computeSeconds, c.commBytes);
    // The backward pass runs the layers in reverse (AccTFM: "Algorithm 1 in
    // reverse order").
    times[static_cast<size_t>(backward ? nLayers - 1 - l : l)] = {c.computeSeconds,
                                                                  beta * c.commBytes};
  }
  std::vector<int> sizes;
  const double seconds = compress::planPartitions(times, alpha, &sizes);
  for (int l = 0; l < nLayers; ++l)
    outSizes[l] = sizes[static_cast<size_t>(backward ? nLayers - 1 - l : l)];
  if (outSeconds) *outSeconds = seconds;
  return spcclSuccess;
}

#include "migrate/linear_cost.h"

namespace spccl::migrate {

LinearCost fitLinearCost(std::span<const double> x, std::span<const double> y) {
  const double n = static_cast<double>(x.size());
  double meanX = 0, meanY = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    meanX += x[i];
    meanY += y[i];
  }
  meanX /= n;
  meanY /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - meanX) * (x[i] - meanX);
    sxy += (x[i] - meanX) * (y[i] - meanY);
  }
  if (sxx == 0) return {meanY, 0};
  const double slope = sxy / sxx;
  return {meanY - slope * meanX, slope};
}

}  // namespace spccl::migrate

#include "migrate/balance_planner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace spccl::migrate {

namespace {

double secondsPerColumn(const RankTiming& t) { return t.iterTime / static_cast<double>(t.columns); }

size_t shedColumns(const RankTiming& t, double gamma) {
  return std::min(t.columns,
                  static_cast<size_t>(std::llround(static_cast<double>(t.columns) * gamma)));
}

spcclBalanceAction_t actionFor(size_t migrate, size_t resize) {
  if (migrate > 0 && resize > 0) return spcclBalanceMigrateAndResize;
  if (migrate > 0) return spcclBalanceMigrate;
  if (resize > 0) return spcclBalanceResize;
  return spcclBalanceKeep;
}

// Slowest first; ties by rank so every rank sorts the same way.
std::vector<int> slowestFirst(std::span<const RankTiming> timings) {
  std::vector<int> order(timings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return timings[a].iterTime > timings[b].iterTime; });
  return order;
}

}  // namespace

double pruningRatio(const RankTiming& rank, double tMin) {
  if (rank.matmulTime <= 0) return 0;
  return std::clamp((rank.iterTime - tMin) / rank.matmulTime, 0.0, 1.0);
}

double migrationShare(double shedColumns, int nranks, const BalanceCostModel& model,
                      double helperSecondsPerColumn) {
  const double helpers = static_cast<double>(nranks - 1);
  auto phi2 = [&](double c) {
    return model.phi2FromSpeed ? c * helperSecondsPerColumn : model.phi2(c);
  };
  // g(beta) = resizing cost - migration cost: falls as beta grows.
  auto g = [&](double beta) {
    const double migrated = shedColumns * beta;
    return model.omega1 + model.omega2(shedColumns - migrated) - model.phi1(migrated) -
           phi2(migrated / helpers);
  };
  if (g(0.0) <= 0) return 0.0;
  if (g(1.0) >= 0) return 1.0;
  double low = 0.0, high = 1.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (low + high);
    (g(mid) > 0 ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

double migrationGain(std::span<const RankTiming> timings, std::span<const int> order, int k,
                     double tMin, std::span<const size_t> shed, const BalanceCostModel& model) {
  const int e = static_cast<int>(timings.size());
  double gamma = 0;  // Gamma(k), columns
  for (int j = 0; j < k; ++j) gamma += static_cast<double>(shed[order[j]]);
  double worstHelper = 0;
  for (int j = k; j < e; ++j)
    worstHelper = std::max(worstHelper, gamma / (e - k) * secondsPerColumn(timings[order[j]]));
  return (timings[order[k - 1]].iterTime - tMin) - model.phi1(gamma) - worstHelper;
}

BalancePlan planBalance(std::span<const RankTiming> timings, const BalanceCostModel& model) {
  const int e = static_cast<int>(timings.size());
  BalancePlan plan;
  plan.ranks.resize(timings.size());
  plan.tMin = timings[0].iterTime;
  for (const RankTiming& t : timings) plan.tMin = std::min(plan.tMin, t.iterTime);

  const std::vector<int> order = slowestFirst(timings);
  const double threshold = plan.tMin * (1.0 + model.stragglerTolerance);
  std::vector<size_t> shed(timings.size(), 0);
  for (int r = 0; r < e; ++r) {
    if (timings[r].iterTime <= threshold) continue;
    ++plan.stragglers;
    plan.ranks[r].gamma = pruningRatio(timings[r], plan.tMin);
    shed[r] = shedColumns(timings[r], plan.ranks[r].gamma);
  }
  const int z = plan.stragglers;
  if (z == 0) return plan;

  if (z == 1) {
    const int s = order[0];
    double helperSpeed = 0;
    for (int y = 0; y < e; ++y)
      if (y != s) helperSpeed = std::max(helperSpeed, secondsPerColumn(timings[y]));
    plan.beta = migrationShare(static_cast<double>(shed[s]), e, model, helperSpeed);
    RankDecision& d = plan.ranks[s];
    d.migrateColumns = std::min(
        shed[s], static_cast<size_t>(std::llround(static_cast<double>(shed[s]) * plan.beta)));
    d.resizeColumns = shed[s] - d.migrateColumns;
    d.action = actionFor(d.migrateColumns, d.resizeColumns);
    plan.migrators = d.migrateColumns > 0 ? 1 : 0;
    return plan;
  }

  int x = z;
  for (int k = 1; k <= z; ++k) {
    if (migrationGain(timings, order, k, plan.tMin, shed, model) < 0) {
      x = k - 1;
      break;
    }
  }
  plan.migrators = x;
  for (int position = 0; position < z; ++position) {
    RankDecision& d = plan.ranks[order[position]];
    (position < x ? d.migrateColumns : d.resizeColumns) = shed[order[position]];
    d.action = actionFor(d.migrateColumns, d.resizeColumns);
  }
  return plan;
}

}  // namespace spccl::migrate

// SEMI-migration's planner: who sheds how many columns, by
// migration or by resizing. A pure function of values every rank agrees
// on (api_balance.cc all-gathers them first), so every rank computes the
// same plan.
//
//  - Eq. (1), with the straggling criterion T_min of section IV-B instead
//    of T_avg: gamma_i = (T_i - T_min) / M_i, the share of rank i's matmul
//    columns whose removal brings it down to T_min; it sheds
//    round(L_i * gamma_i) columns.
//  - Stragglers (Algorithm 2 lines 2-5): T_i > T_min * (1 + tolerance).
//  - One straggler (lines 7-12): Eq. (2) splits its shed columns C into a
//    migrated share beta and a resized share 1 - beta where the straggler's
//    resizing cost equals a helper's migration cost:
//      Omega_1 + Omega_2(C (1 - beta)) = Phi_1(C beta) + Phi_2(C beta / (e - 1)).
//  - Several (lines 13-24): stragglers sorted slowest first; x is found by
//    Eq. (3), f(k) = (T_(k) - T_min) - Phi_1(Gamma(k))
//                    - max_{y not among the first k} Gamma(k) / (e - k) * T_y / L_y,
//    as the k before the first f(k) < 0 (or z); the first x migrate, the
//    other z - x resize.
// Where the paper is loose, the choices made here:
//  - Gamma(k) sums the columns the first k stragglers actually shed,
//    L_i * gamma_i (the paper writes L_i (T_i - T_min) / T_i, which is the
//    same when all of T_i is matmul time), so f(x) judges the migration
//    that line 21 performs.
//  - Ties in T are broken by rank, and "the first x" is by that order
//    (line 20's T_i >= T_x would also take ranks tied with the x-th).
//  - Phi_2 of Eq. (2) defaults to the helpers' measured speed, the same
//    max_y T_y / L_y that Eq. (3) uses.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "migrate/linear_cost.h"
#include "spccl.h"

namespace spccl::migrate {

struct RankTiming {
  double iterTime = 0;    // T_i
  double matmulTime = 0;  // M_i
  size_t columns = 0;     // L_i
};

struct BalanceCostModel {
  double stragglerTolerance = 0.05;
  double omega1 = 0;
  LinearCost omega2, phi1, phi2;
  bool phi2FromSpeed = true;  // Phi_2(c) = c * max over helpers of T_y / L_y
};

struct RankDecision {
  spcclBalanceAction_t action = spcclBalanceKeep;
  double gamma = 0;
  size_t migrateColumns = 0;
  size_t resizeColumns = 0;
};

struct BalancePlan {
  double tMin = 0;
  int stragglers = 0;
  int migrators = 0;
  double beta = 0;
  std::vector<RankDecision> ranks;
};

// Eq. (1) against T_min, clamped to [0, 1]; 0 without matmul time.
double pruningRatio(const RankTiming& rank, double tMin);

// Eq. (2) solved for beta in [0, 1] (bisection; the left side falls and
// the right side grows with beta for non-negative slopes). 0 when even
// resizing everything is no dearer than migrating nothing, 1 when
// migrating everything is still cheaper than resizing what is left.
double migrationShare(double shedColumns, int nranks, const BalanceCostModel& model,
                      double helperSecondsPerColumn);

// Eq. (3)'s f(k) for the k slowest (order: rank indices, slowest first).
double migrationGain(std::span<const RankTiming> timings, std::span<const int> order, int k,
                     double tMin, std::span<const size_t> shed, const BalanceCostModel& model);

// Timings must be valid: iterTime > 0 and finite, 0 <= matmulTime <= iterTime, columns > 0.
BalancePlan planBalance(std::span<const RankTiming> timings, const BalanceCostModel& model);

}  // namespace spccl::migrate

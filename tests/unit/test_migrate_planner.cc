// SEMI-migration's planner (Eq. (1)-(3), Algorithm 2) on
// examples worked by hand, written out next to each test; then the
// collective spcclBalancePlan on real ranks: the same plan everywhere, and
// bad input failing every rank with an error naming the culprit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../common/fork_ranks.h"
#include "migrate/balance_planner.h"
#include "migrate/linear_cost.h"
#include "spccl.h"

namespace spccl::migrate {
namespace {

std::vector<RankTiming> timingsOf(std::vector<double> t, std::vector<double> m,
                                  size_t columns = 100) {
  std::vector<RankTiming> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back({t[i], m[i], columns});
  return out;
}

// T = {1, 1.02, 1.04, 1}: within 5% of T_min = 1, nobody straggles.
TEST(BalancePlanner, NoStragglerWithinTolerance) {
  BalanceCostModel model;
  BalancePlan plan = planBalance(timingsOf({1, 1.02, 1.04, 1}, {0.5, 0.5, 0.5, 0.5}), model);
  EXPECT_EQ(plan.stragglers, 0);
  for (const RankDecision& d : plan.ranks) EXPECT_EQ(d.action, spcclBalanceKeep);
  // The paper's strict criterion (tolerance 0) makes both slower ranks stragglers.
  model.stragglerTolerance = 0;
  EXPECT_EQ(planBalance(timingsOf({1, 1.02, 1.04, 1}, {0.5, 0.5, 0.5, 0.5}), model).stragglers, 2);
}

// Eq. (1) with T_min: gamma = (T_i - T_min) / M_i.
//   T = 2, T_min = 1, M = 1.25: gamma = 0.8; M = 0.5: 2 -> clamped to 1.
TEST(BalancePlanner, PruningRatioEquation1) {
  EXPECT_DOUBLE_EQ(pruningRatio({2, 1.25, 100}, 1), 0.8);
  EXPECT_DOUBLE_EQ(pruningRatio({2, 0.5, 100}, 1), 1.0);
  EXPECT_DOUBLE_EQ(pruningRatio({1, 0.5, 100}, 1), 0.0);
  EXPECT_DOUBLE_EQ(pruningRatio({2, 0, 100}, 1), 0.0);
}

// One straggler, Eq. (2). e = 4, L = 100, T = {1, 1, 2, 1}, M_2 = 1.25:
//   gamma = 0.8, C = L * gamma = 80 columns to shed.
//   Omega_1 = 0.01, Omega_2(c) = 0.001 c, Phi_1(c) = 0.0005 c,
//   Phi_2 from the helpers' speed T_y / L_y = 1 / 100 = 0.01 s per column:
//   0.01 + 0.001 * 80 (1 - b) = 0.0005 * 80 b + 0.01 * 80 b / 3
//   0.09 - 0.08 b = 0.04 b + 0.266667 b  ->  b = 0.09 / 0.386667 = 0.232759
//   migrate round(80 b) = round(18.62) = 19 columns, resize 61.
TEST(BalancePlanner, SingleStragglerSplitsByEquation2) {
  BalanceCostModel model;
  model.omega1 = 0.01;
  model.omega2 = {0, 0.001};
  model.phi1 = {0, 0.0005};
  BalancePlan plan = planBalance(timingsOf({1, 1, 2, 1}, {0.5, 0.5, 1.25, 0.5}), model);
  EXPECT_EQ(plan.stragglers, 1);
  EXPECT_EQ(plan.migrators, 1);
  EXPECT_NEAR(plan.beta, 0.09 / (0.08 + 0.04 + 0.8 / 3), 1e-9);
  const RankDecision& s = plan.ranks[2];
  EXPECT_DOUBLE_EQ(s.gamma, 0.8);
  EXPECT_EQ(s.action, spcclBalanceMigrateAndResize);
  EXPECT_EQ(s.migrateColumns, 19u);
  EXPECT_EQ(s.resizeColumns, 61u);
  for (int r : {0, 1, 3}) EXPECT_EQ(plan.ranks[r].action, spcclBalanceKeep);

  // An explicit Phi_2(c) = 0.002 c: 0.09 - 0.08 b = 0.04 b + 0.002 * 80 b / 3
  //   -> b = 0.09 / 0.173333 = 0.519231, migrate round(41.54) = 42, resize 38.
  model.phi2 = {0, 0.002};
  model.phi2FromSpeed = false;
  plan = planBalance(timingsOf({1, 1, 2, 1}, {0.5, 0.5, 1.25, 0.5}), model);
  EXPECT_NEAR(plan.beta, 0.09 / (0.12 + 0.16 / 3), 1e-9);
  EXPECT_EQ(plan.ranks[2].migrateColumns, 42u);
  EXPECT_EQ(plan.ranks[2].resizeColumns, 38u);
}

// The ends of Eq. (2): free resizing -> resize everything (beta 0); a
// resizing cost above even full migration's -> migrate everything.
TEST(BalancePlanner, Equation2Extremes) {
  BalanceCostModel model;  // all zero: g(0) = 0 -> beta = 0
  BalancePlan plan = planBalance(timingsOf({1, 1, 2, 1}, {0.5, 0.5, 1.25, 0.5}), model);
  EXPECT_EQ(plan.beta, 0.0);
  EXPECT_EQ(plan.ranks[2].action, spcclBalanceResize);
  EXPECT_EQ(plan.ranks[2].resizeColumns, 80u);
  EXPECT_EQ(plan.migrators, 0);
  // Omega_1 = 10 s: g(1) = 10 - 0.0005 * 80 - 0.01 * 80 / 3 > 0 -> beta = 1.
  model.omega1 = 10;
  model.phi1 = {0, 0.0005};
  plan = planBalance(timingsOf({1, 1, 2, 1}, {0.5, 0.5, 1.25, 0.5}), model);
  EXPECT_EQ(plan.beta, 1.0);
  EXPECT_EQ(plan.ranks[2].action, spcclBalanceMigrate);
  EXPECT_EQ(plan.ranks[2].migrateColumns, 80u);
}

// Several stragglers, Eq. (3) and Algorithm 2 lines 13-24.
//   e = 4, L = 100, T = {4, 1, 2, 1.5}, M = {3.75, 0.5, 2, 1}; T_min = 1.
//   Stragglers (z = 3), slowest first: rank 0, rank 2, rank 3.
//   gamma: rank 0 (4-1)/3.75 = 0.8 -> 80 columns; rank 2 (2-1)/2 = 0.5 -> 50;
//   rank 3 (1.5-1)/1 = 0.5 -> 50. T_y / L_y: 0.04, 0.01, 0.02, 0.015.
//   Phi_1(c) = 0.01 c:
//   f(1) = (4 - 1) - 0.8 - max(0.02, 0.015, 0.01) * 80 / 3 = 3 - 0.8 - 0.5333 = 1.667 > 0
//   f(2) = (2 - 1) - 1.3 - max(0.015, 0.01) * 130 / 2 = 1 - 1.3 - 0.975 = -1.275 < 0
//   -> x = 1: rank 0 migrates 80 columns, ranks 2 and 3 resize 50 each.
TEST(BalancePlanner, SeveralStragglersByEquation3) {
  BalanceCostModel model;
  model.phi1 = {0, 0.01};
  const auto timings = timingsOf({4, 1, 2, 1.5}, {3.75, 0.5, 2, 1});
  const std::vector<int> order = {0, 2, 3, 1};
  const std::vector<size_t> shed = {80, 0, 50, 50};
  EXPECT_NEAR(migrationGain(timings, order, 1, 1.0, shed, model), 3 - 0.8 - 0.02 * 80 / 3, 1e-12);
  EXPECT_NEAR(migrationGain(timings, order, 2, 1.0, shed, model), 1 - 1.3 - 0.975, 1e-12);
  BalancePlan plan = planBalance(timings, model);
  EXPECT_EQ(plan.stragglers, 3);
  EXPECT_EQ(plan.migrators, 1);
  EXPECT_EQ(plan.ranks[0].action, spcclBalanceMigrate);
  EXPECT_EQ(plan.ranks[0].migrateColumns, 80u);
  EXPECT_EQ(plan.ranks[2].action, spcclBalanceResize);
  EXPECT_EQ(plan.ranks[2].resizeColumns, 50u);
  EXPECT_EQ(plan.ranks[3].action, spcclBalanceResize);
  EXPECT_EQ(plan.ranks[1].action, spcclBalanceKeep);

  // Free communication (Phi_1 = 0):
  //   f(2) = 1 - 0 - 0.975 = 0.025 > 0;
  //   f(3) = (1.5 - 1) - 0 - 0.01 * 180 / 1 = -1.3 < 0  -> x = 2.
  model.phi1 = {0, 0};
  plan = planBalance(timings, model);
  EXPECT_EQ(plan.migrators, 2);
  EXPECT_EQ(plan.ranks[0].action, spcclBalanceMigrate);
  EXPECT_EQ(plan.ranks[2].action, spcclBalanceMigrate);
  EXPECT_EQ(plan.ranks[2].migrateColumns, 50u);
  EXPECT_EQ(plan.ranks[3].action, spcclBalanceResize);
}

// No f(k) < 0: every straggler migrates (x = z).
//   e = 4, L = 100, T = {2, 2, 1, 1}, M = {2, 2, 1, 1}: gamma 0.5 -> 50 each.
//   f(1) = 1 - max(0.02, 0.01, 0.01) * 50 / 3 = 0.667; f(2) = 1 - 0.01 * 100 / 2 = 0.5.
TEST(BalancePlanner, AllStragglersMigrateWhenEveryGainIsPositive) {
  BalancePlan plan = planBalance(timingsOf({2, 2, 1, 1}, {2, 2, 1, 1}), BalanceCostModel{});
  EXPECT_EQ(plan.stragglers, 2);
  EXPECT_EQ(plan.migrators, 2);
  EXPECT_EQ(plan.ranks[0].migrateColumns, 50u);
  EXPECT_EQ(plan.ranks[1].migrateColumns, 50u);
}

TEST(BalancePlanner, LinearFit) {
  const double x[] = {0, 10, 20, 30}, y[] = {1, 2, 3, 4};
  LinearCost line = fitLinearCost(x, y);
  EXPECT_NEAR(line.intercept, 1, 1e-12);
  EXPECT_NEAR(line.slope, 0.1, 1e-12);
  const double one[] = {5}, oneY[] = {2};
  line = fitLinearCost(one, oneY);
  EXPECT_EQ(line.slope, 0);
  EXPECT_EQ(line.intercept, 2);
}

// ---- the collective form ----

using namespace spccl::testing;

void onRanks(int nranks, const std::function<bool(spcclComm_t, int)>& body) {
  auto outcomes = forkRanks(nranks, [&](int rank, const spcclUniqueId& id) {
    spcclComm_t comm = initOrExit(nranks, id, rank, 20000);
    bool ok = body(comm, rank);
    spcclCommDestroy(comm);
    return ok ? kChildOk : kChildWrongResult;
  });
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(outcomes[r].status, kChildOk) << "rank " << r;
}

bool check(bool ok, int rank, const std::string& what) {
  if (!ok) std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  return ok;
}

// The several-stragglers example again, each rank passing only its own
// numbers: every rank returns that plan, and the slices of rank 0's 80
// columns go to its helpers 1, 2, 3 as 27, 27, 26.
TEST(BalancePlanCollective, SamePlanOnEveryRank) {
  onRanks(4, [](spcclComm_t comm, int rank) {
    const double t[] = {4, 1, 2, 1.5}, m[] = {3.75, 0.5, 2, 1};
    spcclBalanceCostModel_t model = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
    model.phi1[1] = 0.01;
    std::vector<spcclBalanceRank_t> ranks(4);
    spcclBalancePlan_t plan{};
    plan.size = sizeof(plan);
    plan.ranks = ranks.data();
    plan.capacity = 4;
    bool ok = check(spcclBalancePlan(comm, t[rank], m[rank], 100, &model, &plan) == spcclSuccess,
                    rank, spcclGetLastError(comm));
    ok &= check(plan.nranks == 4 && plan.tMin == 1 && plan.stragglers == 3 && plan.migrators == 1,
                rank, "plan summary");
    ok &= check(ranks[0].action == spcclBalanceMigrate && ranks[0].migrateColumns == 80, rank,
                "rank 0");
    ok &= check(ranks[2].action == spcclBalanceResize && ranks[2].resizeColumns == 50, rank,
                "rank 2");
    ok &= check(ranks[3].iterTime == 1.5 && ranks[3].columns == 100, rank, "gathered values");
    const size_t expectBegin[] = {0, 0, 27, 54}, expectLength[] = {0, 27, 27, 26};
    for (int r = 0; r < 4; ++r) {
      size_t begin = 9, length = 9;
      ok &= check(spcclBalanceSlice(&plan, 0, r, &begin, &length) == spcclSuccess, rank, "slice");
      ok &= check(length == expectLength[r] && (length == 0 || begin == expectBegin[r]), rank,
                  "slice of rank " + std::to_string(r));
    }
    return ok;
  });
}

bool failsNaming(spcclResult_t res, spcclResult_t expected, spcclComm_t comm,
                 const std::string& text, int rank) {
  const std::string message = spcclGetLastError(comm);
  return check(res == expected && message.find(text) != std::string::npos, rank,
               "expected '" + text + "', got: " + message);
}

TEST(BalancePlanCollective, BadInputFailsEveryRankNamingIt) {
  onRanks(3, [](spcclComm_t comm, int rank) {
    std::vector<spcclBalanceRank_t> ranks(3);
    spcclBalancePlan_t plan{};
    plan.size = sizeof(plan);
    plan.ranks = ranks.data();
    plan.capacity = 3;
    bool ok = true;
    // NaN on rank 1.
    spcclResult_t res = spcclBalancePlan(comm, rank == 1 ? NAN : 1.0, 0.5, 10, nullptr, &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm, "iterTime nan of rank 1", rank);
    // Negative matmul time on rank 2.
    res = spcclBalancePlan(comm, 1.0, rank == 2 ? -0.5 : 0.5, 10, nullptr, &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm, "of rank 2", rank);
    // Matmul longer than the iteration on rank 0.
    res = spcclBalancePlan(comm, 1.0, rank == 0 ? 2.0 : 0.5, 10, nullptr, &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm, "matmulTime 2 of rank 0", rank);
    // No columns on rank 1.
    res = spcclBalancePlan(comm, 1.0, 0.5, rank == 1 ? 0 : 10, nullptr, &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm, "columns of rank 1 is 0", rank);
    // A NULL plan on rank 2: rank 2 names the argument, the others name rank 2.
    res = spcclBalancePlan(comm, 1.0, 0.5, 10, nullptr, rank == 2 ? nullptr : &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm,
                      rank == 2 ? "plan is NULL" : "rank 2 passed invalid", rank);
    // A negative cost on rank 0.
    spcclBalanceCostModel_t model = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
    if (rank == 0) model.phi1[1] = -1;
    res = spcclBalancePlan(comm, 1.0, 0.5, 10, &model, &plan);
    ok &= failsNaming(res, spcclInvalidArgument, comm,
                      rank == 0 ? "costModel->phi1[1]" : "rank 0 passed", rank);
    // Different models on different ranks.
    model = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
    model.omega1 = rank;
    res = spcclBalancePlan(comm, 1.0, 0.5, 10, &model, &plan);
    ok &= failsNaming(res, spcclInvalidUsage, comm, "different costModel", rank);
    // Still usable afterwards.
    model.omega1 = 0;
    res = spcclBalancePlan(comm, rank == 1 ? 3.0 : 1.0, 0.5, 10, &model, &plan);
    ok &= check(res == spcclSuccess && plan.stragglers == 1, rank, spcclGetLastError(comm));
    return ok;
  });
}

}  // namespace
}  // namespace spccl::migrate

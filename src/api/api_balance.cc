// API: the SEMI-migration planner (spcclBalancePlan, spcclBalanceSlice,
// spcclFitLinearCost). The plan is computed from all-gathered values, so
// every rank returns the same one; a rank whose own arguments are bad
// still takes part in the exchange (flagged), so its peers fail at once
// with an error naming it instead of waiting for it.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "api/api_guard.h"
#include "api/arguments.h"
#include "api/migration_call.h"
#include "base/check.h"
#include "base/versioned_struct.h"
#include "coll/collective.h"
#include "core/comm.h"
#include "migrate/balance_planner.h"
#include "migrate/migration_slice.h"
#include "spccl.h"

using namespace spccl;
using namespace spccl::migrate;

namespace {

// What each rank contributes to the plan; the cost model travels along so
// that ranks given different models fail instead of planning differently.
struct PlanInput {
  double iterTime;
  double matmulTime;
  uint64_t columns;
  uint64_t argumentsValid;  // 0: this rank's own call was malformed
  double model[8];          // tolerance, omega1, omega2[2], phi1[2], phi2[2]
};
static_assert(sizeof(PlanInput) == 96);

bool finiteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

// In PlanInput::model's order.
void encodeModel(const spcclBalanceCostModel_t& m, double out[8]) {
  const double values[8] = {m.stragglerTolerance,
                            m.omega1,
                            m.omega2[0],
                            m.omega2[1],
                            m.phi1[0],
                            m.phi1[1],
                            m.phi2[0],
                            m.phi2[1]};
  std::memcpy(out, values, sizeof(values));
}

spcclResult_t checkCostModel(const spcclBalanceCostModel_t* m, const char* call) {
  // Read whole, not field by field: ranks exchange and compare the model as
  // all of its values.
  const VersionedStruct<spcclBalanceCostModel_t> in(
      *m,
      {call, "costModel->size", "costModel magic", "it", "SPCCL_BALANCE_COST_MODEL_INITIALIZER"});
  SPCCL_CHECK(in.checkWhole(SPCCL_BALANCE_COST_MODEL_MAGIC));
  double values[8];
  encodeModel(*m, values);
  const char* names[8] = {"stragglerTolerance",
                          "omega1",
                          "omega2[0]",
                          "omega2[1]",
                          "phi1[0]",
                          "phi1[1]",
                          "phi2[0]",
                          "phi2[1]"};
  for (int i = 0; i < 8; ++i)
    if (!finiteNonNegative(values[i]))
      return SPCCL_FAIL(spcclInvalidArgument, "%s: costModel->%s = %g must be finite and >= 0",
                        call, names[i], values[i]);
  return spcclSuccess;
}

spcclResult_t checkLocalArguments(spcclComm_t comm, const spcclBalanceCostModel_t* model,
                                  const spcclBalancePlan_t* plan, const char* call) {
  SPCCL_CHECK(checkNotNull(call, "plan", plan));
  if (plan->size < sizeof(spcclBalancePlan_t))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: plan->size %zu is too small (%zu)", call,
                      plan->size, sizeof(spcclBalancePlan_t));
  SPCCL_CHECK(checkNotNull(call, "plan->ranks", plan->ranks));
  if (plan->capacity < comm->nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: plan->capacity %d is below the %d ranks", call,
                      plan->capacity, comm->nranks);
  if (model != nullptr) SPCCL_CHECK(checkCostModel(model, call));
  return spcclSuccess;
}

// Every rank runs the same checks on the same gathered values.
spcclResult_t checkGathered(const std::vector<PlanInput>& all, const char* call) {
  for (size_t r = 0; r < all.size(); ++r) {
    const PlanInput& in = all[r];
    if (!in.argumentsValid)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: rank %zu passed invalid arguments (see its log)",
                        call, r);
    if (!std::isfinite(in.iterTime) || in.iterTime <= 0)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: iterTime %g of rank %zu must be finite and > 0",
                        call, in.iterTime, r);
    if (!finiteNonNegative(in.matmulTime) || in.matmulTime > in.iterTime)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: matmulTime %g of rank %zu must be finite, >= 0 and <= its iterTime %g",
                        call, in.matmulTime, r, in.iterTime);
    if (in.columns == 0)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: columns of rank %zu is 0", call, r);
    if (std::memcmp(in.model, all[0].model, sizeof(in.model)) != 0)
      return SPCCL_FAIL(spcclInvalidUsage, "%s: rank %zu passed a different costModel than rank 0",
                        call, r);
  }
  return spcclSuccess;
}

BalanceCostModel decodeModel(const double m[8]) {
  BalanceCostModel model;
  model.stragglerTolerance = m[0];
  model.omega1 = m[1];
  model.omega2 = {m[2], m[3]};
  model.phi1 = {m[4], m[5]};
  model.phi2 = {m[6], m[7]};
  model.phi2FromSpeed = m[6] == 0 && m[7] == 0;
  return model;
}

spcclResult_t gatherInputs(CollContext& ctx, const PlanInput& mine, std::vector<PlanInput>* all) {
  CollArgs args;
  args.type = CollType::AllGather;
  args.sendbuff = &mine;
  args.recvbuff = all->data();
  args.count = sizeof(PlanInput);
  args.datatype = spcclUint8;
  return runDenseCollective(ctx, args, "");
}

void exportPlan(const std::vector<PlanInput>& all, const BalancePlan& plan,
                spcclBalancePlan_t* out) {
  out->nranks = static_cast<int>(all.size());
  out->tMin = plan.tMin;
  out->stragglers = plan.stragglers;
  out->migrators = plan.migrators;
  out->beta = plan.beta;
  for (size_t r = 0; r < all.size(); ++r) {
    spcclBalanceRank_t& rank = out->ranks[r];
    rank.action = plan.ranks[r].action;
    rank.iterTime = all[r].iterTime;
    rank.matmulTime = all[r].matmulTime;
    rank.columns = all[r].columns;
    rank.gamma = plan.ranks[r].gamma;
    rank.migrateColumns = plan.ranks[r].migrateColumns;
    rank.resizeColumns = plan.ranks[r].resizeColumns;
  }
}

bool migrates(spcclBalanceAction_t action) {
  return action == spcclBalanceMigrate || action == spcclBalanceMigrateAndResize;
}

}  // namespace

extern "C" {

spcclResult_t spcclBalancePlan(spcclComm_t comm, double iterTime, double matmulTime, size_t columns,
                               const spcclBalanceCostModel_t* costModel, spcclBalancePlan_t* plan) {
  return guardCommApi("spcclBalancePlan", comm, [&]() -> spcclResult_t {
    const char* call = "spcclBalancePlan";
    clearThreadLastError();
    SPCCL_CHECK(checkNotNull(call, "comm", comm));
    const spcclResult_t local = checkLocalArguments(comm, costModel, plan, call);
    const std::string localError = local == spcclSuccess ? "" : threadLastError();

    PlanInput mine{};
    mine.iterTime = iterTime;
    mine.matmulTime = matmulTime;
    mine.columns = columns;
    mine.argumentsValid = local == spcclSuccess;
    const spcclBalanceCostModel_t defaults = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
    encodeModel(local == spcclSuccess && costModel != nullptr ? *costModel : defaults, mine.model);
    std::vector<PlanInput> all(static_cast<size_t>(comm->nranks));
    // Host memory of its own, and the caller uses the plan at once: no stream.
    spcclResult_t res =
        runCollectiveBlocking(comm,
                              migrationSignature(MigrationKind::PlanExchange, spcclUint8, spcclSum,
                                                 -1, sizeof(PlanInput)),
                              [&](CollContext& ctx) { return gatherInputs(ctx, mine, &all); });
    if (local != spcclSuccess) {
      // This rank's own error is the one to report, whatever the exchange did.
      setThreadLastError(localError);
      return finishCall(comm, local);
    }
    if (res != spcclSuccess) return res;
    res = checkGathered(all, call);
    if (res != spcclSuccess) return finishCall(comm, res);

    std::vector<RankTiming> timings(all.size());
    for (size_t r = 0; r < all.size(); ++r)
      timings[r] = {all[r].iterTime, all[r].matmulTime, static_cast<size_t>(all[r].columns)};
    exportPlan(all, planBalance(timings, decodeModel(mine.model)), plan);
    return spcclSuccess;
  });
}

spcclResult_t spcclBalanceSlice(const spcclBalancePlan_t* plan, int migrator, int rank,
                                size_t* begin, size_t* length) {
  return guardApi("spcclBalanceSlice", [&]() -> spcclResult_t {
    const char* call = "spcclBalanceSlice";
    clearThreadLastError();
    if (plan == nullptr || plan->ranks == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: plan (or plan->ranks) is NULL", call);
    if (begin == nullptr || length == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: begin or length is NULL", call);
    SPCCL_CHECK(checkRank(call, "migrator", migrator, plan->nranks));
    SPCCL_CHECK(checkRank(call, "rank", rank, plan->nranks));
    std::vector<int> helpers;
    for (int r = 0; r < plan->nranks; ++r)
      if (!migrates(plan->ranks[r].action)) helpers.push_back(r);
    const size_t total =
        migrates(plan->ranks[migrator].action) ? plan->ranks[migrator].migrateColumns : 0;
    const ElementRange slice = helperSlice(rank, migrator, helpers, total);
    *begin = slice.offset;
    *length = slice.count;
    return spcclSuccess;
  });
}

spcclResult_t spcclFitLinearCost(const double* x, const double* y, int n, double coefficients[2]) {
  return guardApi("spcclFitLinearCost", [&]() -> spcclResult_t {
    const char* call = "spcclFitLinearCost";
    clearThreadLastError();
    if (n < 1) return SPCCL_FAIL(spcclInvalidArgument, "%s: n %d must be at least 1", call, n);
    if (x == nullptr || y == nullptr || coefficients == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "%s: x, y or coefficients is NULL", call);
    for (int i = 0; i < n; ++i)
      if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
        return SPCCL_FAIL(spcclInvalidArgument, "%s: point %d (%g, %g) is not finite", call, i,
                          x[i], y[i]);
    const LinearCost line = fitLinearCost({x, static_cast<size_t>(n)}, {y, static_cast<size_t>(n)});
    coefficients[0] = line.intercept;
    coefficients[1] = line.slope;
    return spcclSuccess;
  });
}

}  // extern "C"

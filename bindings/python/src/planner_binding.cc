// The planners: AccTFM's micro-batch planner (spcclPlanPartitions,
// docs/compressed.md), DynPipe's stage partitioning and re-packing
// (spcclStagePartition, spcclRepack) and SEMI-migration's balance plan
// (spcclBalancePlan, spcclBalanceSlice, spcclFitLinearCost;
// docs/migration.md). The local ones
// take and return plain lists; spccl/_planners.py has checked the values'
// types and lengths and wraps the results in dataclasses.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

namespace {

using RankTuple = std::tuple<int, double, double, size_t, double, size_t, size_t>;

py::tuple exportPlan(const spcclBalancePlan_t& plan) {
  std::vector<RankTuple> ranks;
  for (int r = 0; r < plan.nranks; ++r) {
    const spcclBalanceRank_t& k = plan.ranks[r];
    ranks.emplace_back(static_cast<int>(k.action), k.iterTime, k.matmulTime, k.columns, k.gamma,
                       k.migrateColumns, k.resizeColumns);
  }
  return py::make_tuple(plan.tMin, plan.stragglers, plan.migrators, plan.beta, ranks);
}

}  // namespace

void bindPlanners(py::module_& m) {
  // Returns (sizes, predicted seconds).
  m.def("plan_partitions",
        [](const std::vector<double>& computeSeconds, const std::vector<double>& commBytes,
           double alpha, double beta, bool backward) {
          std::vector<spcclLayerCost> layers(computeSeconds.size());
          for (size_t l = 0; l < layers.size(); ++l)
            layers[l] = {computeSeconds[l], commBytes.at(l)};
          std::vector<int> sizes(layers.size());
          double seconds = 0;
          raiseOnError(spcclPlanPartitions(layers.data(), static_cast<int>(layers.size()), alpha,
                                           beta, backward ? 1 : 0, sizes.data(), &seconds),
                       nullptr);
          return std::make_pair(sizes, seconds);
        });
  // layerMem empty: none (NULL). stageOfLayer: the diffusion's start, else
  // ignored. Returns (stageOfLayer, maxStageCost, maxStageMemory, rounds,
  // roundBound).
  m.def("stage_partition", [](const std::vector<double>& layerCosts,
                              const std::vector<double>& layerMem, int nStages, double memCapacity,
                              int method, std::vector<int> stageOfLayer) {
    stageOfLayer.resize(layerCosts.size(), 0);
    spcclStagePartitionInfo_t info{};
    raiseOnError(
        spcclStagePartition(layerCosts.data(), layerMem.empty() ? nullptr : layerMem.data(),
                            static_cast<int>(layerCosts.size()), nStages, memCapacity,
                            static_cast<spcclStageMethod_t>(method), stageOfLayer.data(), &info),
        nullptr);
    return std::make_tuple(stageOfLayer, info.maxStageCost, info.maxStageMemory, info.rounds,
                           info.roundBound);
  });
  // Returns (newStageOfLayer, newStages).
  m.def("repack", [](const std::vector<double>& layerMem, const std::vector<int>& stageOfLayer,
                     int nStages, double memCapacity, int targetStages) {
    std::vector<int> packed(layerMem.size(), 0);
    int newStages = 0;
    raiseOnError(
        spcclRepack(layerMem.data(), stageOfLayer.data(), static_cast<int>(layerMem.size()),
                    nStages, memCapacity, targetStages, packed.data(), &newStages),
        nullptr);
    return std::make_pair(packed, newStages);
  });
  // Returns (a, b) of the least-squares line a + b*x.
  m.def("fit_linear_cost", [](const std::vector<double>& x, const std::vector<double>& y) {
    double coefficients[2] = {0, 0};
    raiseOnError(spcclFitLinearCost(x.data(), y.data(), static_cast<int>(x.size()), coefficients),
                 nullptr);
    return std::make_pair(coefficients[0], coefficients[1]);
  });
  // The plan as the (action, migrateColumns) of every rank suffices.
  m.def("balance_slice", [](const std::vector<int>& actions,
                            const std::vector<size_t>& migrateColumns, int migrator, int rank) {
    std::vector<spcclBalanceRank_t> ranks(actions.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
      ranks[r].action = static_cast<spcclBalanceAction_t>(actions[r]);
      ranks[r].migrateColumns = migrateColumns.at(r);
    }
    spcclBalancePlan_t plan{};
    plan.size = sizeof(plan);
    plan.ranks = ranks.data();
    plan.capacity = plan.nranks = static_cast<int>(ranks.size());
    size_t begin = 0, length = 0;
    raiseOnError(spcclBalanceSlice(&plan, migrator, rank, &begin, &length), nullptr);
    return std::make_pair(begin, length);
  });
}

void bindBalancePlan(py::class_<CommHandle>& comm) {
  // model: (stragglerTolerance, omega1, omega2[0], omega2[1], phi1[0],
  // phi1[1], phi2[0], phi2[1]) or None for the defaults. Returns (tMin,
  // stragglers, migrators, beta, ranks) with ranks as RankTuple.
  comm.def("balance_plan", [](const CommHandle& self, double iterTime, double matmulTime,
                              size_t columns, std::optional<std::vector<double>> model) {
    spcclBalanceCostModel_t costModel = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
    if (model) {
      const std::vector<double>& v = *model;
      if (v.size() != 8) throw py::value_error("balance_plan: the cost model has 8 fields");
      costModel.stragglerTolerance = v[0];
      costModel.omega1 = v[1];
      costModel.omega2[0] = v[2];
      costModel.omega2[1] = v[3];
      costModel.phi1[0] = v[4];
      costModel.phi1[1] = v[5];
      costModel.phi2[0] = v[6];
      costModel.phi2[1] = v[7];
    }
    int nranks = 0;
    raiseOnError(spcclCommCount(self.get(), &nranks), self.get());
    std::vector<spcclBalanceRank_t> ranks(static_cast<size_t>(nranks));
    spcclBalancePlan_t plan{};
    plan.size = sizeof(plan);
    plan.ranks = ranks.data();
    plan.capacity = nranks;
    runReleased(self, [&](spcclComm_t c) {
      return spcclBalancePlan(c, iterTime, matmulTime, columns, &costModel, &plan);
    });
    return exportPlan(plan);
  });
}

}  // namespace spccl_python

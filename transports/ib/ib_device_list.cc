#include "transports/ib/ib_device_list.h"

#include <algorithm>

#include "base/check.h"
#include "spccl_net.h"

namespace spccl::ib {

namespace {

// Selected ports, stably sorted by their position in SPCCL_IB_HCA.
std::vector<IbPort> candidatePorts(const std::vector<IbPort>& activePorts, const HcaSpec& spec) {
  std::vector<IbPort> candidates;
  for (const IbPort& p : activePorts)
    if (hcaSelected(spec, p.device, p.port)) candidates.push_back(p);
  std::stable_sort(candidates.begin(), candidates.end(), [&spec](const IbPort& a, const IbPort& b) {
    return hcaListPosition(spec, a.device, a.port) < hcaListPosition(spec, b.device, b.port);
  });
  return candidates;
}

std::vector<std::string> distinctHcas(const std::vector<IbPort>& ports) {
  std::vector<std::string> hcas;
  for (const IbPort& p : ports)
    if (std::find(hcas.begin(), hcas.end(), p.device) == hcas.end()) hcas.push_back(p.device);
  return hcas;
}

}  // namespace

std::vector<ChosenDevice> chooseDevices(const std::vector<IbPort>& activePorts, const HcaSpec& spec,
                                        int railsKnob, const RankHcas& rankHcas) {
  std::vector<IbPort> candidates = candidatePorts(activePorts, spec);
  if (candidates.empty()) return {};
  int rails = std::min({railsKnob, static_cast<int>(candidates.size()), SPCCL_NET_MAX_DEVICES});
  rails = std::max(rails, 1);

  HcaRanking ranking;
  if (rankHcas) ranking = rankHcas(distinctHcas(candidates), rails);
  std::vector<ChosenDevice> chosen;
  std::vector<bool> taken(candidates.size(), false);
  for (size_t rank = 0; rank < ranking.hcas.size(); ++rank)
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i] || candidates[i].device != ranking.hcas[rank]) continue;
      taken[i] = true;
      chosen.push_back(
          {candidates[i], rank == 0 ? "closest by topology: " + ranking.why
                                    : "HCA " + std::to_string(rank + 1) + " in topology order"});
    }
  bool listed = !spec.exclude && !spec.entries.empty();
  std::string order = listed ? "SPCCL_IB_HCA order" : "discovery order";
  if (rankHcas && ranking.hcas.empty())
    order = "no topology order (" + ranking.why + "); " + order;
  else if (rankHcas)
    order = "not in the topology's ranking; " + order;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!taken[i]) chosen.push_back({candidates[i], order});
  if (chosen.size() > static_cast<size_t>(rails)) chosen.resize(static_cast<size_t>(rails));
  return chosen;
}

spcclResult_t checkDeviceIndex(const char* call, int dev, int ndev) {
  if (dev >= 0 && dev < ndev) return spcclSuccess;
  if (ndev <= 0)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "ib %s: dev=%d, but ib has no devices (init not done or failed)", call, dev);
  return SPCCL_FAIL(spcclInvalidArgument, "ib %s: dev=%d is out of range (%d device%s: 0..%d)",
                    call, dev, ndev, ndev == 1 ? "" : "s", ndev - 1);
}

}  // namespace spccl::ib

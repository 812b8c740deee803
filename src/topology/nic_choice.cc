#include "topology/nic_choice.h"

#include <algorithm>
#include <sstream>

namespace spccl::topo {

int pciDistance(const PciDevice& a, const PciDevice& b) {
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() &&
         a.bridges[common] == b.bridges[common])
    ++common;
  if (common >= 2) return 0;  // a shared bridge below the host bridge: a PCIe switch
  if (common == 1) return 1;  // the same host bridge
  return a.numaNode >= 0 && a.numaNode == b.numaNode ? 1 : 2;
}

namespace {

bool isCandidate(const PciDevice& nic, const NicRequest& request) {
  if (request.candidates.empty()) return true;
  for (const std::string& c : request.candidates)
    if (nic.hasName(c)) return true;
  return false;
}

NicChoice fromOverride(const Topology& topology, const NicRequest& request) {
  NicChoice choice;
  std::stringstream names(request.override);
  std::string name;
  while (std::getline(names, name, ','))
    for (size_t i = 0; i < topology.nics.size(); ++i)
      if (topology.nics[i].hasName(name)) choice.nics.push_back(static_cast<int>(i));
  choice.why = choice.nics.empty() ? "SPCCL_TOPO_NIC=" + request.override + " names no NIC here"
                                   : "SPCCL_TOPO_NIC=" + request.override;
  return choice;
}

}  // namespace

NicChoice chooseNics(const Topology& topology, const NicRequest& request) {
  if (!request.override.empty()) return fromOverride(topology, request);
  NicChoice choice;
  const PciDevice* gpu = request.gpu >= 0 && request.gpu < static_cast<int>(topology.gpus.size())
                             ? &topology.gpus[static_cast<size_t>(request.gpu)]
                             : nullptr;
  std::vector<std::pair<int, int>> scored;  // (distance, nic index)
  for (size_t i = 0; i < topology.nics.size(); ++i) {
    const PciDevice& nic = topology.nics[i];
    if (!isCandidate(nic, request)) continue;
    int distance = 1;
    if (gpu != nullptr)
      distance = pciDistance(nic, *gpu);
    else if (request.numaNode >= 0)
      distance = nic.numaNode == request.numaNode ? 1 : 2;
    scored.emplace_back(distance, static_cast<int>(i));
  }
  if (scored.empty()) {
    choice.why = "no NIC among the candidates";
    return choice;
  }
  std::stable_sort(scored.begin(), scored.end());
  // Tied best NICs are shared out by local rank; the rest follow as rails.
  size_t tied = 0;
  while (tied < scored.size() && scored[tied].first == scored.front().first) ++tied;
  std::rotate(scored.begin(), scored.begin() + static_cast<long>(request.localRank % tied),
              scored.begin() + static_cast<long>(tied));
  size_t rails = static_cast<size_t>(std::max(1, request.rails));
  for (size_t i = 0; i < scored.size() && i < rails; ++i) choice.nics.push_back(scored[i].second);
  static const char* kDistance[] = {"behind the same PCIe switch as",
                                    "on the same host bridge or "
                                    "NUMA node as",
                                    "across NUMA nodes from"};
  const std::string& primary = topology.nics[static_cast<size_t>(choice.nics.front())].name();
  if (gpu != nullptr)
    choice.why = primary + " is " + kDistance[scored.front().first] + " GPU " + gpu->name();
  else if (request.numaNode >= 0)
    choice.why = primary + (scored.front().first == 1 ? " is on" : " is not on") +
                 " this rank's NUMA node " + std::to_string(request.numaNode);
  else
    choice.why = primary + ": no GPU or NUMA preference; spread by local rank";
  if (tied > 1)
    choice.why += " (" + std::to_string(tied) + " equally close, local rank " +
                  std::to_string(request.localRank) + ")";
  return choice;
}

}  // namespace spccl::topo

#include "transports/ib/ib_topology_ranking.h"

#ifdef SPCCL_IB_WITH_TOPOLOGY
#include "base/knobs.h"
#include "topology/nic_choice.h"
#endif

namespace spccl::ib {

RankHcas topologyRanking() {
#ifdef SPCCL_IB_WITH_TOPOLOGY
  return [](const std::vector<std::string>& candidates, int rails) {
    HcaRanking ranking;
    topo::Topology topology;
    if (topo::discoverTopology(knobString("SPCCL_TOPO_XML"), &topology) != spcclSuccess) {
      ranking.why = "hwloc topology discovery failed";
      return ranking;
    }
    topo::NicRequest request;
    request.localRank = static_cast<int>(knobInt("SPCCL_LOCAL_RANK"));
    request.numaNode = topo::currentNumaNode(topology);
    request.rails = rails;
    request.override = knobString("SPCCL_TOPO_NIC");
    request.candidates = candidates;
    topo::NicChoice choice = topo::chooseNics(topology, request);
    ranking.why = choice.why;
    // A topology NIC is a PCI function; its OS names include the HCA's.
    for (int nic : choice.nics)
      for (const std::string& hca : candidates)
        if (topology.nics[static_cast<size_t>(nic)].hasName(hca)) ranking.hcas.push_back(hca);
    return ranking;
  };
#else
  return nullptr;
#endif
}

}  // namespace spccl::ib

// Which NIC(s) a rank uses: the one closest to its GPU (behind the same
// PCIe switch, else on the same host bridge or NUMA node), or to its CPU's
// NUMA node when it has no GPU. Ranks whose candidates tie are spread over
// the tied NICs by local rank, and with rails > 1 a rank uses several
// (its first choice first), as NCCL's rails. SPCCL_TOPO_NIC overrides.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace spccl::topo {

// 0: behind the same PCIe switch; 1: same host bridge or NUMA node;
// 2: across NUMA nodes (through the CPU interconnect).
int pciDistance(const PciDevice& a, const PciDevice& b);

struct NicRequest {
  int localRank = 0;
  int gpu = -1;       // index into Topology::gpus; -1: no GPU
  int numaNode = -1;  // the rank's CPU NUMA node; -1: unknown
  int rails = 1;
  std::string override;  // comma-separated NIC names or bus ids (SPCCL_TOPO_NIC)
  // Only NICs for which this is true are candidates (e.g. RDMA ports); empty: all.
  std::vector<std::string> candidates;
};

struct NicChoice {
  std::vector<int> nics;  // indices into Topology::nics, first = primary
  std::string why;        // for the INFO line
};

NicChoice chooseNics(const Topology& topology, const NicRequest& request);

}  // namespace spccl::topo

// Which active ports become the plugin's devices (spcclNet_v2_t::devices),
// in which order. SPCCL_IB_HCA filters; the topology orders, closest first
// (device 0 is the one a single-rail job uses); SPCCL_TOPO_RAILS says how
// many are kept.
// Pure: the topology comes in as a function, so this is tested without a
// device or hwloc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "spccl.h"
#include "transports/ib/ib_hca_spec.h"
#include "transports/ib/ib_port.h"

namespace spccl::ib {

// HCAs (device names) closest first, as src/topology's chooseNics ranks
// them; it may leave some out (not in the topology, or beyond `rails`).
struct HcaRanking {
  std::vector<std::string> hcas;
  std::string why;  // chooseNics' reason for the first one
};
// Ranks `candidates` (distinct HCA names, SPCCL_IB_HCA order) for `rails` devices.
using RankHcas = std::function<HcaRanking(const std::vector<std::string>& candidates, int rails)>;

struct ChosenDevice {
  IbPort port;
  std::string reason;  // for the INFO line
};

// Ports SPCCL_IB_HCA selects, ordered: those of the HCAs rankHcas ranks in
// its order, then the others in SPCCL_IB_HCA order (it orders, it does not
// exclude: a port hwloc does not know, soft-RoCE's, still serves). Within
// an HCA its ports keep SPCCL_IB_HCA order. Capped at min(railsKnob,
// candidate ports, SPCCL_NET_MAX_DEVICES), at least 1. rankHcas empty: no
// topology, SPCCL_IB_HCA order alone.
std::vector<ChosenDevice> chooseDevices(const std::vector<IbPort>& activePorts, const HcaSpec& spec,
                                        int railsKnob, const RankHcas& rankHcas);

// spcclInvalidArgument naming the call and `dev` unless 0 <= dev < ndev;
// spcclInvalidUsage when there are no devices (ndev 0: before init).
spcclResult_t checkDeviceIndex(const char* call, int dev, int ndev);

}  // namespace spccl::ib

// The topology's order of HCAs for chooseDevices (ib_device_list.h):
// src/topology's chooseNics for this rank's local rank and NUMA node (the
// plugin does not know the rank's GPU), with SPCCL_TOPO_NIC and
// SPCCL_TOPO_XML. Empty (no ranking) when the
// plugin is built without hwloc (SPCCL_IB_WITH_TOPOLOGY undefined).
#pragma once

#include "transports/ib/ib_device_list.h"

namespace spccl::ib {

RankHcas topologyRanking();

}  // namespace spccl::ib

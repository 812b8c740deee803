// RDMA device and port discovery (libibverbs), port selection by
// SPCCL_IB_HCA, GID selection for RoCE (SPCCL_IB_GID_INDEX), and the one
// opened device (context + protection domain) the plugin uses.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "spccl.h"
#include "transports/ib/ib_hca_spec.h"
#include "transports/ib/ib_qp_setup.h"

namespace spccl::ib {

struct IbPort {
  std::string device;
  int port = 1;
  int linkLayer = IBV_LINK_LAYER_INFINIBAND;
  ibv_mtu mtu = IBV_MTU_1024;
  uint16_t lid = 0;
  int gidIndex = 0;
  ibv_gid gid{};
  std::string pciPath;  // /sys/devices/pci.../0000:xx:yy.z, for topology
};

// Active ports of the devices SPCCL_IB_HCA selects. An empty list is not an
// error; *why then says what was found.
spcclResult_t listActivePorts(const HcaSpec& spec, int gidIndexKnob, std::vector<IbPort>* out,
                              std::string* why);

struct IbDevice {
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  IbPort port;
  int maxInline = 0;
};
spcclResult_t openDevice(const IbPort& port, IbDevice* out);

}  // namespace spccl::ib

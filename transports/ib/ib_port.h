// An active RDMA port as discovery records it (ib_device.cc): what QP setup
// needs (link layer, MTU, LID, GID) and what getProperties reports (name,
// PCI path, link rate). Plain data, so device choice is tested without one.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace spccl::ib {

struct IbPort {
  std::string device;  // the HCA, "mlx5_0"
  int port = 1;
  int linkLayer = IBV_LINK_LAYER_INFINIBAND;
  ibv_mtu mtu = IBV_MTU_1024;
  uint16_t lid = 0;
  int gidIndex = 0;
  ibv_gid gid{};
  std::string pciPath;  // /sys/devices/pci.../0000:xx:yy.z, for topology and getProperties
  int speedMbps = 0;    // 0: unknown
};

// "mlx5_0:1": how logs, SPCCL_IB_HCA and getProperties name a port.
std::string portName(const IbPort& port);

// The port's data rate from ibv_port_attr's active_speed (per-lane rate
// code) and active_width (lane count code), as NCCL computes it: 4x EDR is
// 100000. 0 when either code is unknown.
int linkSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth);

}  // namespace spccl::ib

// Connection setup of an RC queue pair, as plain data and pure functions so
// that it is tested without a device. Both ends of a comm send their QpInfo
// over the side channel (transports/common/side_channel.h), then move their QP
// INIT -> RTR -> RTS with the attributes computed here.
//   InfiniBand: the peer is addressed by LID; RoCE (Ethernet link layer):
//   by GID, through a GRH, using the local GID at SPCCL_IB_GID_INDEX (on
//   RoCE v2 that index names an IPv4/IPv6-mapped, UDP-encapsulated GID).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace spccl::ib {

constexpr uint32_t kQpInfoMagic = 0x53504942;  // "SPIB"

struct QpInfo {
  uint32_t magic = kQpInfoMagic;
  uint32_t qpn = 0;
  uint32_t psn = 0;  // 24 bits
  uint16_t lid = 0;
  uint8_t port = 0;
  uint8_t linkLayer = IBV_LINK_LAYER_INFINIBAND;
  uint8_t mtu = IBV_MTU_1024;  // enum ibv_mtu
  uint8_t gidIndex = 0;
  uint8_t reserved[2] = {};
  uint8_t gid[16] = {};
};
static_assert(sizeof(QpInfo) == 36);  // the same on every host: it goes over the wire

// What RTR needs from the two sides. Path MTU: the smaller active MTU.
struct RtrAttributes {
  ibv_qp_attr attr;
  int mask;
};
RtrAttributes rtrAttributes(const QpInfo& local, const QpInfo& remote);

struct RtsAttributes {
  ibv_qp_attr attr;
  int mask;
};
RtsAttributes rtsAttributes(const QpInfo& local);

// INIT: the port, and remote write allowed (the peer writes into our
// receive buffers with RDMA write-with-immediate).
RtsAttributes initAttributes(uint8_t port);

// A validation of what came over the wire; nullptr when fine, else why not.
const char* checkQpInfo(const QpInfo& remote, const QpInfo& local);

// One GID table entry as the kernel describes it.
struct GidEntry {
  int index = 0;
  ibv_gid gid{};
  std::string type;  // "IB/RoCE v1" or "RoCE v2"
};
// SPCCL_IB_GID_INDEX < 0: prefer RoCE v2 with an IPv4-mapped address, then
// RoCE v2, then the first non-zero GID; -1 when the table is empty.
int pickGidIndex(const std::vector<GidEntry>& table);

}  // namespace spccl::ib

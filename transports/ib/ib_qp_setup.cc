#include "transports/ib/ib_qp_setup.h"

#include <algorithm>
#include <cstring>

namespace spccl::ib {

namespace {
// Retry counts and timeouts as NCCL's defaults: 7 retries of 4.096 us *
// 2^20 (~4 s) before a dead peer's QP errors out.
constexpr uint8_t kTimeout = 20;
constexpr uint8_t kRetryCount = 7;
constexpr uint8_t kRnrRetry = 7;
constexpr uint8_t kMinRnrTimer = 12;
constexpr uint8_t kMaxRdAtomic = 1;
bool isZero(const ibv_gid& gid) {
  for (uint8_t b : gid.raw)
    if (b != 0) return false;
  return true;
}

bool isIpv4Mapped(const ibv_gid& gid) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, prefix, sizeof(prefix)) == 0;
}
}  // namespace

int pickGidIndex(const std::vector<GidEntry>& table) {
  for (const GidEntry& e : table)
    if (e.type == "RoCE v2" && isIpv4Mapped(e.gid)) return e.index;
  for (const GidEntry& e : table)
    if (e.type == "RoCE v2") return e.index;
  for (const GidEntry& e : table)
    if (!isZero(e.gid)) return e.index;
  return -1;
}

RtsAttributes initAttributes(uint8_t port) {
  RtsAttributes out{};
  out.attr.qp_state = IBV_QPS_INIT;
  out.attr.pkey_index = 0;
  out.attr.port_num = port;
  out.attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  out.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return out;
}

RtrAttributes rtrAttributes(const QpInfo& local, const QpInfo& remote) {
  RtrAttributes out{};
  ibv_qp_attr& a = out.attr;
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu));
  a.dest_qp_num = remote.qpn;
  a.rq_psn = remote.psn;
  a.max_dest_rd_atomic = kMaxRdAtomic;
  a.min_rnr_timer = kMinRnrTimer;
  a.ah_attr.port_num = local.port;
  a.ah_attr.sl = 0;
  a.ah_attr.src_path_bits = 0;
  if (local.linkLayer == IBV_LINK_LAYER_ETHERNET) {  // RoCE: addressed by GID
    a.ah_attr.is_global = 1;
    a.ah_attr.dlid = 0;
    std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid, sizeof(remote.gid));
    a.ah_attr.grh.sgid_index = local.gidIndex;
    a.ah_attr.grh.hop_limit = 255;
    a.ah_attr.grh.flow_label = 0;
    a.ah_attr.grh.traffic_class = 0;
  } else {
    a.ah_attr.is_global = 0;
    a.ah_attr.dlid = remote.lid;
  }
  out.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return out;
}

RtsAttributes rtsAttributes(const QpInfo& local) {
  RtsAttributes out{};
  out.attr.qp_state = IBV_QPS_RTS;
  out.attr.sq_psn = local.psn;
  out.attr.timeout = kTimeout;
  out.attr.retry_cnt = kRetryCount;
  out.attr.rnr_retry = kRnrRetry;
  out.attr.max_rd_atomic = kMaxRdAtomic;
  out.mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
             IBV_QP_MAX_QP_RD_ATOMIC;
  return out;
}

const char* checkQpInfo(const QpInfo& remote, const QpInfo& local) {
  if (remote.magic != kQpInfoMagic) return "not a spccl ib connection";
  if (remote.linkLayer != local.linkLayer)
    return "link layers differ (InfiniBand on one side, Ethernet/RoCE on the other)";
  if (remote.mtu < IBV_MTU_256 || remote.mtu > IBV_MTU_4096) return "bad MTU";
  if (local.linkLayer == IBV_LINK_LAYER_INFINIBAND && remote.lid == 0)
    return "InfiniBand port without a LID (subnet manager not running?)";
  return nullptr;
}

}  // namespace spccl::ib

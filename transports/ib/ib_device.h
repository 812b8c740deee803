// RDMA port discovery (libibverbs), GID selection for RoCE
// (SPCCL_IB_GID_INDEX), and the opened devices the plugin uses: one per
// port that chooseDevices (ib_device_list.h) kept.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>
#include <vector>

#include "spccl.h"
#include "transports/ib/ib_gdr_support.h"
#include "transports/ib/ib_mr_cache.h"
#include "transports/ib/ib_port.h"

namespace spccl::ib {

// Every active port of every device. *seen lists all ports with their
// state ("mlx5_0:1 (active), mlx5_0:2 (down)"), empty when there is no
// RDMA device at all.
spcclResult_t listActivePorts(int gidIndexKnob, std::vector<IbPort>* out, std::string* seen);

// Access of every data registration, host or GPU, cached or dma-buf: the
// peer RDMA-writes into receive buffers.
constexpr int kMrAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

// An opened HCA: its context, protection domain, the MR cache of that PD
// and the memory it registers (ib_gdr_support.h). The ports of one HCA
// share it (one context and PD per HCA, not per port): registrations
// belong to a PD, so a buffer sent over both ports is registered once.
struct IbHca {
  IbHca() = default;
  ~IbHca();
  IbHca(const IbHca&) = delete;
  IbHca& operator=(const IbHca&) = delete;

  std::string name;
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  std::unique_ptr<MrCache> cache;  // destroyed before pd: it deregisters
  GdrSupport gdr;                  // decided when opened, fixed after
};

// One of the plugin's devices (spcclNet_v2_t's dev): a port on an opened HCA.
struct IbDevice {
  IbPort port;
  std::shared_ptr<IbHca> hca;
  int maxInline = 64;
};

// Opens the HCAs of `ports` (each once) and returns one device per port, in
// order. cacheEntries: SPCCL_IB_MR_CACHE, per HCA; gdrKnob: SPCCL_IB_GDR.
spcclResult_t openDevices(const std::vector<IbPort>& ports, size_t cacheEntries, int64_t gdrKnob,
                          std::vector<IbDevice>* out);

}  // namespace spccl::ib

// Which kinds of memory an ib device registers (spcclNetProperties_v2_t's
// ptrSupport), decided at init per HCA as NCCL's net_ib does:
//   SPCCL_PTR_CUDA: a peer-memory module lets ibv_reg_mr pin GPU memory
//     (ncclIbGdrSupport: nvidia_peermem, or the legacy nv_peer_mem that
//     registers under /sys/kernel/mm/memory_peers);
//   SPCCL_PTR_DMABUF: libibverbs has ibv_reg_dmabuf_mr and the HCA's PD
//     accepts it (ncclIbDmaBufSupport: a dummy registration with fd -1 fails
//     with EOPNOTSUPP/EPROTONOSUPPORT when unsupported, EBADF otherwise).
// SPCCL_IB_GDR=0 turns both off. Pure (the sysfs root and the probe's
// outcome come in), so it is tested over temporary directories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "spccl.h"

namespace spccl::ib {

// GPUDirect RDMA pins GPU memory in 64 KiB GPU pages (GPU_PAGE_SIZE of the
// driver's nv-p2p.h), whatever the host's page size.
constexpr size_t kGpuPageBytes = size_t{64} << 10;

// The pages a registration of `type` memory is widened to in the MR cache:
// GPU pages for SPCCL_PTR_CUDA (the unit the peer-memory client pins, and
// GPU memory is mapped in at least that unit, so the range stays mapped),
// host pages otherwise (64 KiB could reach unmapped host pages).
size_t registrationPageBytes(int type, size_t hostPageBytes);

// What ib_dmabuf.cc found on one HCA's PD.
struct DmaBufProbe {
  bool haveFunction = false;  // libibverbs exports ibv_reg_dmabuf_mr (rdma-core >= 34)
  int error = 0;  // errno of ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0); 0 if it (oddly) succeeded
};

struct GdrSupport {
  int ptrSupport = 0;  // SPCCL_PTR_* bits; SPCCL_PTR_HOST always
  std::string reason;  // why, for the INFO line and for refusals
};

// sysfsRoot: "/sys" (tests pass a temporary directory). gdrKnob:
// SPCCL_IB_GDR; 1 uses what is detected, 0 and anything else host memory
// only (an unknown value turns GPU memory off rather than guessing).
GdrSupport decideGdrSupport(const std::string& sysfsRoot, const DmaBufProbe& probe,
                            int64_t gdrKnob);

// "SPCCL_PTR_CUDA" for one bit ("an unknown type" otherwise); "HOST+CUDA"
// for a ptrSupport mask.
const char* ptrTypeName(int type);
std::string ptrSupportNames(int ptrSupport);

// spcclInvalidArgument naming the call and the type unless `type` is one
// of the bits of `accepted` (what the call itself takes, before any device
// is looked at).
spcclResult_t checkTypeAccepted(const char* call, int type, int accepted);

// spcclInvalidArgument naming the call, the type, the device, the missing
// bit and the reason unless the device's ptrSupport has `needed` (the
// type's own bit for regMr, SPCCL_PTR_DMABUF for regMrDmaBuf).
spcclResult_t checkDeviceSupports(const char* call, int type, int needed, const std::string& device,
                                  const GdrSupport& support);

}  // namespace spccl::ib

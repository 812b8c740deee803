// GPU memory registered through a dma-buf (regMrDmaBuf): the HCA imports
// the exporter's pages by fd (the caller gets the fd from the CUDA driver,
// cuMemGetHandleForAddressRange), no peer-memory module involved.
// ibv_reg_dmabuf_mr is looked up at run time (IBVERBS_1.12, rdma-core 34),
// as NCCL's ibvwrap does, so the plugin still loads with an older
// libibverbs and its devices then report no SPCCL_PTR_DMABUF.
//
// These registrations are not cached: the caller registers a buffer once
// and keeps the handle (that is what regMr is for), and a cache key would
// be wrong either way: by address it ignores the fd, by (fd, offset, size)
// it hands out a stale registration once the fd is closed and its number
// reused for another buffer. Each handle owns its MR until deregMr.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "spccl.h"
#include "transports/ib/ib_gdr_support.h"
#include "transports/ib/ib_mr_cache.h"

namespace spccl::ib {

// NCCL's probe, on one HCA's PD: ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0).
DmaBufProbe probeDmaBuf(ibv_pd* pd);

// Registers `size` bytes at `offset` into dma-buf `fd`, addressed as `data`
// (the iova: sges and clear-to-sends carry the buffer's address as with
// ibv_reg_mr). The result has dmaBuf set and covers [data, data + size).
spcclResult_t registerDmaBuf(ibv_pd* pd, int access, const std::string& device, void* data,
                             size_t size, uint64_t offset, int fd,
                             std::unique_ptr<Registration>* out);

void deregisterDmaBuf(std::unique_ptr<Registration> registration);

}  // namespace spccl::ib

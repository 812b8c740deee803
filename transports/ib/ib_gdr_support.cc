#include "transports/ib/ib_gdr_support.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "spccl_net.h"

namespace spccl::ib {

namespace {

struct PtrType {
  int bit;
  const char* name;
  const char* shortName;
};
constexpr PtrType kPtrTypes[] = {{SPCCL_PTR_HOST, "SPCCL_PTR_HOST", "HOST"},
                                 {SPCCL_PTR_CUDA, "SPCCL_PTR_CUDA", "CUDA"},
                                 {SPCCL_PTR_DMABUF, "SPCCL_PTR_DMABUF", "DMABUF"}};

// The files NCCL's ncclIbGdrSupport tests, relative to /sys: each exists
// while its module is loaded.
struct PeerMemoryModule {
  const char* file;
  const char* module;
};
constexpr PeerMemoryModule kPeerMemoryModules[] = {
    {"module/nvidia_peermem/version", "nvidia_peermem"},       // shipped with the GPU driver
    {"kernel/mm/memory_peers/nv_mem/version", "nv_peer_mem"},  // Mellanox's legacy module
    {"kernel/mm/memory_peers/nv_mem_nc/version", "nv_peer_mem (nv_mem_nc)"},
};

bool peerMemoryLoaded(const std::string& root, std::string* why) {
  for (const PeerMemoryModule& m : kPeerMemoryModules) {
    std::string path = root + "/" + m.file;
    if (access(path.c_str(), F_OK) == 0) {
      *why = std::string(m.module) + " is loaded (" + path + ")";
      return true;
    }
  }
  *why = "no peer-memory module (neither " + root + "/module/nvidia_peermem/version nor " + root +
         "/kernel/mm/memory_peers/nv_mem{,_nc}/version exists)";
  return false;
}

bool dmaBufAccepted(const DmaBufProbe& probe, std::string* why) {
  if (!probe.haveFunction) {
    *why = "libibverbs has no ibv_reg_dmabuf_mr (rdma-core older than 34)";
    return false;
  }
  std::string outcome = probe.error == 0 ? "succeeded"
                                         : "failed with errno " + std::to_string(probe.error) +
                                               " (" + std::strerror(probe.error) + ")";
  // NCCL's reading: EOPNOTSUPP or EPROTONOSUPPORT when the provider or the
  // kernel cannot import dma-bufs; any other failure (EBADF for fd -1) is
  // the argument's fault, so the path exists.
  if (probe.error == EOPNOTSUPP || probe.error == EPROTONOSUPPORT) {
    *why = "not supported by this HCA or kernel: ibv_reg_dmabuf_mr with fd -1 " + outcome;
    return false;
  }
  *why = "ibv_reg_dmabuf_mr with fd -1 " + outcome + ", i.e. the PD accepts dma-bufs";
  return true;
}

}  // namespace

size_t registrationPageBytes(int type, size_t hostPageBytes) {
  return type == SPCCL_PTR_CUDA ? kGpuPageBytes : hostPageBytes;
}

GdrSupport decideGdrSupport(const std::string& sysfsRoot, const DmaBufProbe& probe,
                            int64_t gdrKnob) {
  GdrSupport support;
  support.ptrSupport = SPCCL_PTR_HOST;
  if (gdrKnob != 1) {
    support.reason = "SPCCL_IB_GDR=" + std::to_string(gdrKnob) +
                     (gdrKnob == 0 ? "" : " (neither 0 nor 1)") + ": GPU memory is not registered";
    return support;
  }
  std::string peerWhy;
  std::string dmaBufWhy;
  if (peerMemoryLoaded(sysfsRoot, &peerWhy)) support.ptrSupport |= SPCCL_PTR_CUDA;
  if (dmaBufAccepted(probe, &dmaBufWhy)) support.ptrSupport |= SPCCL_PTR_DMABUF;
  support.reason = "peer memory: " + peerWhy + "; dma-buf: " + dmaBufWhy;
  return support;
}

const char* ptrTypeName(int type) {
  for (const PtrType& t : kPtrTypes)
    if (t.bit == type) return t.name;
  return "an unknown type";
}

std::string ptrSupportNames(int ptrSupport) {
  std::string names;
  for (const PtrType& t : kPtrTypes) {
    if ((ptrSupport & t.bit) == 0) continue;
    if (!names.empty()) names += '+';
    names += t.shortName;
  }
  return names.empty() ? "none" : names;
}

spcclResult_t checkTypeAccepted(const char* call, int type, int accepted) {
  bool oneBit = type > 0 && (type & (type - 1)) == 0;
  if (oneBit && (type & accepted) != 0) return spcclSuccess;
  return SPCCL_FAIL(spcclInvalidArgument,
                    "ib %s: memory type %d (%s) is not accepted (%s takes %s)", call, type,
                    ptrTypeName(type), call, ptrSupportNames(accepted).c_str());
}

spcclResult_t checkDeviceSupports(const char* call, int type, int needed, const std::string& device,
                                  const GdrSupport& support) {
  if ((support.ptrSupport & needed) != 0) return spcclSuccess;
  return SPCCL_FAIL(spcclInvalidArgument,
                    "ib %s of %s memory: device %s lacks %s (it registers %s: %s)", call,
                    ptrTypeName(type), device.c_str(), ptrTypeName(needed),
                    ptrSupportNames(support.ptrSupport).c_str(), support.reason.c_str());
}

}  // namespace spccl::ib

#include "transports/ib/ib_dmabuf.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"

namespace spccl::ib {

namespace {

using RegDmaBufMr = ibv_mr* (*)(ibv_pd*, uint64_t offset, size_t length, uint64_t iova, int fd,
                                int access);

// Calling ibv_reg_dmabuf_mr directly would bind the plugin to IBVERBS_1.12
// and make dlopen fail on hosts with an older libibverbs.
RegDmaBufMr regDmaBufMr() {
  static const RegDmaBufMr function = [] {
    // The plugin links libibverbs: RTLD_NOLOAD only finds the loaded copy.
    void* library = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) return RegDmaBufMr{nullptr};
    auto found =
        reinterpret_cast<RegDmaBufMr>(dlvsym(library, "ibv_reg_dmabuf_mr", "IBVERBS_1.12"));
    dlclose(library);  // drops the reference NOLOAD took; the link keeps it loaded
    return found;
  }();
  return function;
}

}  // namespace

DmaBufProbe probeDmaBuf(ibv_pd* pd) {
  DmaBufProbe probe;
  RegDmaBufMr reg = regDmaBufMr();
  probe.haveFunction = reg != nullptr;
  if (reg == nullptr) return probe;
  errno = 0;
  ibv_mr* mr = reg(pd, 0, 0, 0, -1, 0);
  probe.error = mr == nullptr ? errno : 0;
  if (mr != nullptr) ibv_dereg_mr(mr);
  return probe;
}

spcclResult_t registerDmaBuf(ibv_pd* pd, int access, const std::string& device, void* data,
                             size_t size, uint64_t offset, int fd,
                             std::unique_ptr<Registration>* out) {
  RegDmaBufMr reg = regDmaBufMr();
  if (reg == nullptr)
    return SPCCL_FAIL(spcclSystemError, "ib regMrDmaBuf on %s: libibverbs has no ibv_reg_dmabuf_mr",
                      device.c_str());
  uint64_t iova = reinterpret_cast<uintptr_t>(data);
  ibv_mr* mr = reg(pd, offset, size, iova, fd, access);
  if (mr == nullptr)
    return SPCCL_FAIL(spcclSystemError,
                      "ib regMrDmaBuf on %s: ibv_reg_dmabuf_mr of %zu bytes at offset %llu of fd "
                      "%d (address %p) failed: %s",
                      device.c_str(), size, static_cast<unsigned long long>(offset), fd, data,
                      strerror(errno));
  auto registration = std::make_unique<Registration>();
  registration->base = static_cast<uintptr_t>(iova);
  registration->length = size;
  registration->mr = mr;
  registration->lkey = mr->lkey;
  registration->rkey = mr->rkey;
  registration->refs = 1;
  registration->dmaBuf = true;
  *out = std::move(registration);
  return spcclSuccess;
}

void deregisterDmaBuf(std::unique_ptr<Registration> registration) {
  if (registration != nullptr && registration->mr != nullptr)
    ibv_dereg_mr(static_cast<ibv_mr*>(registration->mr));
}

}  // namespace spccl::ib

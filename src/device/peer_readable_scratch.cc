#include "device/peer_readable_scratch.h"

#include <algorithm>

#include "base/check.h"

namespace spccl::device {

spcclResult_t PeerReadableScratch::reserve(size_t bytes, const char* call, CuDevicePtr* out) {
  if (bytes > bytes_) {
    const size_t grown = std::max(bytes, 2 * bytes_);
    CuDevicePtr fresh = 0;
    const CuResult allocated = cudaDriver()->memAlloc(&fresh, grown);
    if (allocated != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: %zu bytes of device scratch for the peers: %s", call,
                        grown, describeCuError("cuMemAlloc", allocated).c_str());
    if (live_ != 0) outgrown_.push_back(live_);
    live_ = fresh;
    bytes_ = grown;
  }
  *out = live_;
  return spcclSuccess;
}

void PeerReadableScratch::release() {
  const CudaDriver* driver = cudaDriverFoundSoFar();
  if (driver == nullptr) return;
  for (CuDevicePtr pointer : outgrown_) driver->memFree(pointer);
  if (live_ != 0) driver->memFree(live_);
  outgrown_.clear();
  live_ = 0;
  bytes_ = 0;
}

}  // namespace spccl::device

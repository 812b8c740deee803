#include "device/peer_readable_scratch.h"

#include <algorithm>

#include "base/check.h"

namespace spccl::device {

spcclResult_t PeerReadableScratch::reserve(size_t bytes, const char* call, CuDevicePtr* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes > bytes_) {
    size_t size = std::max(bytes, 2 * bytes_);
    CuDevicePtr fresh = 0;
    CuResult allocated = cudaDriver()->memAlloc(&fresh, size);
    if (allocated != 0 && size > bytes) {  // the doubling does not fit: exactly what is asked
      size = bytes;
      allocated = cudaDriver()->memAlloc(&fresh, size);
    }
    if (allocated != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: %zu bytes of device scratch for the peers: %s", call,
                        size, describeCuError("cuMemAlloc", allocated).c_str());
    if (live_ != 0) outgrown_.push_back(live_);
    live_ = fresh;
    bytes_ = size;
  }
  *out = live_;
  return spcclSuccess;
}

bool PeerReadableScratch::take(size_t bytes, CuDevicePtr* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes > bytes_) return false;
  *out = live_;
  return true;
}

size_t PeerReadableScratch::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

void PeerReadableScratch::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  const CudaDriver* driver = cudaDriverFoundSoFar();
  if (driver == nullptr) return;
  for (CuDevicePtr pointer : outgrown_) driver->memFree(pointer);
  if (live_ != 0) driver->memFree(live_);
  outgrown_.clear();
  live_ = 0;
  bytes_ = 0;
}

}  // namespace spccl::device

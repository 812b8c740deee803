#include "device/peer_readable_scratch.h"

#include <algorithm>

#include "base/check.h"

namespace spccl::device {

spcclResult_t PeerReadableScratch::reserve(size_t bytes, const char* call, CuDevicePtr* out) {
  // Only reservers wait here (API callers' threads, before their calls
  // hold a stream), never a body in take(): no deadlock through the device.
  std::lock_guard<std::mutex> growing(growing_);
  size_t current = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes <= bytes_) {
      *out = live_;
      return spcclSuccess;
    }
    current = bytes_;
  }
  // Allocated without the lock: cuMemAlloc may wait for the device, and
  // so for a stream that an earlier call's body holds (core/staged_call.h)
  // while that body waits in take() for this lock.
  size_t size = std::max(bytes, 2 * current);
  CuDevicePtr fresh = 0;
  CuResult allocated = cudaDriver()->memAlloc(&fresh, size);
  if (allocated != 0 && size > bytes) {  // the doubling does not fit: exactly what is asked
    size = bytes;
    allocated = cudaDriver()->memAlloc(&fresh, size);
  }
  if (allocated != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %zu bytes of device scratch for the peers: %s", call,
                      size, describeCuError("cuMemAlloc", allocated).c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  if (size > bytes_) {
    if (live_ != 0) outgrown_.push_back(live_);
    live_ = fresh;
    bytes_ = size;
  } else {
    outgrown_.push_back(fresh);  // (not reached: reservers run one at a time)
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

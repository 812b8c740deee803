// Device memory of spccl's own (scratch for its kernels), freed when
// destroyed. cuMemAlloc through the dlopen'ed driver (cuda_driver.h), in
// the calling thread's current context; no pool yet: one allocation per
// use.
#pragma once

#include <cstddef>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // At least `bytes` (the old memory is freed when it is smaller); `what`
  // names the buffer in the error (spcclSystemError with the driver's).
  spcclResult_t reserve(size_t bytes, const char* what);
  CuDevicePtr address() const { return address_; }

 private:
  void release();
  CuDevicePtr address_ = 0;
  size_t bytes_ = 0;
};

// A non-blocking stream (CU_STREAM_NON_BLOCKING) of spccl's own in the
// calling thread's current context, created at the first use there and
// kept for the process's life. Work on it does not wait for a caller's
// stream that a host function holds (core/staged_call.h), nor for the
// legacy NULL stream.
spcclResult_t ownStream(const char* call, CuStream* out);

}  // namespace spccl::device

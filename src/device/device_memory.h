// Device memory of spccl's own (scratch for its kernels) and a stream to
// run them on, safe to use while a caller's stream is held by a host
// function (core/staged_call.h): the memory is allocated and freed in a
// stream's order (cuMemAllocAsync / cuMemFreeAsync), never with cuMemFree,
// which waits for the whole device and so for the held stream.
#pragma once

#include <cstddef>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

struct StreamMemoryDriver {
  CuResult (*memAllocAsync)(CuDevicePtr* pointer, size_t bytes, CuStream stream);
  CuResult (*memFreeAsync)(CuDevicePtr pointer, CuStream stream);
};

// The entry points once the driver is loaded with both (CUDA 11.2 on);
// nullptr before, or with an older driver.
const StreamMemoryDriver* streamMemoryDriver();

// Device memory allocated on `stream` (usable by work queued there after
// the allocation), freed on it when destroyed or outgrown.
class StreamMemory {
 public:
  explicit StreamMemory(CuStream stream) : stream_(stream) {}
  ~StreamMemory();
  StreamMemory(const StreamMemory&) = delete;
  StreamMemory& operator=(const StreamMemory&) = delete;

  // At least `bytes`; `what` names the buffer in the error
  // (spcclSystemError with the driver's).
  spcclResult_t reserve(size_t bytes, const char* what);
  CuDevicePtr address() const { return address_; }

 private:
  void release();
  CuStream stream_;
  CuDevicePtr address_ = 0;
  size_t bytes_ = 0;
};

// A non-blocking stream (CU_STREAM_NON_BLOCKING) of spccl's own in the
// calling thread's current context, created at the first use there and
// kept for the process's life. Work on it does not wait for a caller's
// stream that a host function holds, nor for the legacy NULL stream. Ask
// for it first on the caller's thread: creating a stream while a host
// function holds a stream might wait for the device.
spcclResult_t ownStream(const char* call, CuStream* out);

}  // namespace spccl::device

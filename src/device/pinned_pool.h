// Page-locked host buffers for staging device memory, kept for reuse:
// cuMemHostAlloc costs milliseconds per call, a staged collective needs
// one or two buffers per call.
//
// A PinnedBuffer goes back to the pool when destroyed, from any thread,
// also from a CUDA host function (no CUDA call happens then). Buffers past
// the pool's cap are handed back to the driver at the next acquire, which
// runs on a thread that may call CUDA.
#pragma once

#include <cstddef>

#include "spccl.h"

namespace spccl::device {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  friend spcclResult_t acquirePinned(size_t bytes, PinnedBuffer* out);
  void release();
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// *out holds at least `bytes` of pinned host memory. Needs the driver and
// a current context (the caller's, or ScopedCudaContext).
spcclResult_t acquirePinned(size_t bytes, PinnedBuffer* out);

// Pinned bytes the pool holds, in use or cached (for tests and reports).
size_t pinnedBytesHeld();

}  // namespace spccl::device

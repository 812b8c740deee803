#include "device/pinned_pool.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/check.h"
#include "device/cuda_driver.h"

namespace spccl::device {

namespace {

// Free buffers kept past this many bytes go back to the driver.
constexpr size_t kCacheCapBytes = size_t{1} << 30;
constexpr size_t kMinimumBytes = size_t{64} << 10;
constexpr unsigned kHostAllocPortable = 0x01;  // CU_MEMHOSTALLOC_PORTABLE: every context

struct Pool {
  std::mutex mutex;
  std::multimap<size_t, void*> free;  // capacity -> buffer
  std::vector<void*> toFree;          // over the cap, freed at the next acquire
  size_t cachedBytes = 0;
  size_t heldBytes = 0;
};

// Never destroyed: buffers may come back from CUDA's host-function thread
// while the process exits.
Pool& pool() {
  static auto* instance = new Pool();
  return *instance;
}

// Whole multiples of 64 KiB, so that sizes that differ a little share buffers.
size_t roundedSize(size_t bytes) {
  const size_t rounded = bytes < kMinimumBytes ? kMinimumBytes : bytes;
  return (rounded + kMinimumBytes - 1) / kMinimumBytes * kMinimumBytes;
}

}  // namespace

PinnedBuffer::~PinnedBuffer() { release(); }

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void PinnedBuffer::release() {
  if (data_ == nullptr) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.cachedBytes + capacity_ <= kCacheCapBytes) {
    p.free.emplace(capacity_, data_);
    p.cachedBytes += capacity_;
  } else {
    p.toFree.push_back(data_);
    p.heldBytes -= capacity_;
  }
  data_ = nullptr;
  capacity_ = 0;
}

spcclResult_t acquirePinned(size_t bytes, PinnedBuffer* out) {
  const CudaDriver* d = cudaDriver();
  if (d == nullptr)
    return SPCCL_FAIL(spcclInternalError, "pinned staging needs the CUDA driver, not loaded");
  Pool& p = pool();
  std::vector<void*> toFree;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    toFree.swap(p.toFree);
    // A cached buffer that fits without wasting more than half of what a
    // new one would hold (small requests round up to the 64 KiB minimum).
    auto it = p.free.lower_bound(bytes);
    if (it != p.free.end() && it->first / 2 <= roundedSize(bytes)) {
      out->capacity_ = it->first;
      out->data_ = it->second;
      p.cachedBytes -= it->first;
      p.free.erase(it);
    }
  }
  for (void* buffer : toFree) d->memFreeHost(buffer);
  if (out->data_ != nullptr) return spcclSuccess;
  const size_t capacity = roundedSize(bytes);
  void* data = nullptr;
  const CuResult result = d->memHostAlloc(&data, capacity, kHostAllocPortable);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "staging %zu bytes of device memory: %s", bytes,
                      describeCuError("cuMemHostAlloc", result).c_str());
  std::lock_guard<std::mutex> lock(p.mutex);
  p.heldBytes += capacity;
  out->data_ = data;
  out->capacity_ = capacity;
  return spcclSuccess;
}

size_t pinnedBytesHeld() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().heldBytes;
}

}  // namespace spccl::device

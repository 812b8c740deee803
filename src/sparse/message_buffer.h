// A receive buffer of the sparse schedules (sparse_messages.h's Incoming),
// kept in SparseWorkspace between calls.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace spccl::sparse {

// Receive storage that is not zero-filled: a receive's capacity bounds
// what a peer may send, often far above what it does send, and zeroing it
// (std::vector::resize) cost more than the message (and page-faulted all of
// it in) -- 35 MB per BP call at n = 8, 16 M elements, d = 1 %.
class MessageBuffer {
 public:
  MessageBuffer() = default;
  // A moved-from buffer is empty (no storage, no capacity), so a later
  // allocate() on it allocates.
  MessageBuffer(MessageBuffer&& other) noexcept { *this = std::move(other); }
  MessageBuffer& operator=(MessageBuffer&& other) noexcept {
    storage_ = std::move(other.storage_);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  void allocate(size_t capacity);  // contents undefined; size() 0
  void setSize(size_t bytes) { size_ = bytes; }
  unsigned char* data() { return storage_.get(); }
  const unsigned char* data() const { return storage_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<unsigned char[]> storage_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace spccl::sparse

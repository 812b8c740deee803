// The memory kinds a collective accepts (device, pinned host, managed,
// plain host) as one buffer type for the GPU collective tests: allocate a
// kind, fill it from host bytes and read it back, in stream order or not.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace spccl::gpu_test {

enum class MemoryKind { Device, Pinned, Managed, Host };
const char* memoryKindName(MemoryKind kind);

// bytes (at least 1) of `kind`, filled with 0x5a (a pattern no collective
// produces), freed on destruction. A failed allocation aborts the process:
// every rank must keep calling the same collectives.
class KindBuffer {
 public:
  KindBuffer(MemoryKind kind, size_t bytes);
  ~KindBuffer();
  KindBuffer(const KindBuffer&) = delete;
  KindBuffer& operator=(const KindBuffer&) = delete;

  MemoryKind kind() const { return kind_; }
  size_t bytes() const { return bytes_; }
  void* get() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // Copies host bytes in at offset, on stream (nullptr: the legacy stream,
  // then waits), and waits for the copy.
  void upload(const void* host, size_t bytes, cudaStream_t stream, size_t offset = 0);
  // Enqueues on stream a copy of the whole buffer to host memory, waits for
  // the stream, and returns the bytes. With stream nullptr the copy runs on
  // a stream of its own that does not wait for any other (so it shows what
  // the buffer holds now, not after other queued work).
  std::vector<unsigned char> download(cudaStream_t stream) const;

 private:
  MemoryKind kind_;
  size_t bytes_;
  void* data_ = nullptr;
};

// Aborts with the message when a CUDA call failed: an infrastructure
// failure, not a wrong result.
void cudaOrDie(cudaError_t status, const char* what);
#define SPCCL_CUDA_OR_DIE(call) ::spccl::gpu_test::cudaOrDie((call), #call)

}  // namespace spccl::gpu_test

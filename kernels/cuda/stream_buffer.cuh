// Device memory from the stream-ordered allocator, returned to it on the
// same stream when the owner goes out of scope.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace spccl::kernels::cuda {

class StreamBuffer {
 public:
  StreamBuffer(size_t bytes, cudaStream_t stream) : stream_(stream) {
    status_ = cudaMallocAsync(&data_, bytes > 0 ? bytes : 1, stream);
  }
  ~StreamBuffer() {
    if (status_ == cudaSuccess) cudaFreeAsync(data_, stream_);
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

  cudaError_t status() const { return status_; }
  template <typename T>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
  cudaError_t status_;
};

}  // namespace spccl::kernels::cuda

// Device memory and error checks for device_kernels_bench: a failing CUDA
// call ends the bench with the call's name and CUDA's error string.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace spccl::perf::device_kernels {

inline void checkCuda(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "device_kernels_bench: %s: %s\n", what, cudaGetErrorString(result));
  std::exit(1);
}

// `bytes` of device memory, freed with the object.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    checkCuda(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
    other.data_ = nullptr;
  }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }

  template <typename T>
  void upload(const std::vector<T>& host) {
    checkCuda(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
              "cudaMemcpy to the device");
  }
  template <typename T>
  std::vector<T> download(size_t count) const {
    std::vector<T> host(count);
    checkCuda(cudaMemcpy(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost),
              "cudaMemcpy to the host");
    return host;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

}  // namespace spccl::perf::device_kernels

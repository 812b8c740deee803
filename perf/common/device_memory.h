// --device: the perf binaries' buffers in CUDA device memory, each call on
// one stream (the device path of src/core/staged_call.h). The CUDA driver
// is opened at run time, so the binaries build and run without CUDA; with
// --device and no driver they stop with a clear message. On a host without
// a GPU, LD_LIBRARY_PATH=<build>/tests/cuda_emulation/emulated_driver runs
// them against the emulated driver (tests/cuda_emulation/README.md): the
// logic, not a GPU.
#pragma once

#include <cstddef>
#include <memory>

namespace spccl::perf {

class DeviceMemory {
 public:
  // Opens the driver and makes device (rank % device count)'s primary
  // context current on the calling thread; exits with a message on failure.
  explicit DeviceMemory(int rank);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* allocate(size_t bytes);  // zero-filled
  void release(void* pointer);
  void upload(void* device, const void* host, size_t bytes);
  void download(void* host, const void* device, size_t bytes);
  void* stream() const { return stream_; }
  void synchronize();  // the stream
  int device() const { return device_; }

 private:
  struct Driver;
  std::unique_ptr<Driver> driver_;
  void* stream_ = nullptr;
  int device_ = -1;
};

}  // namespace spccl::perf

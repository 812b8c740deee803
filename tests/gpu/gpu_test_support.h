// What every tests/gpu binary needs: a skip when no GPU can be used (CI has
// none), device buffers, the sizes to test, and inputs for every type.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::gpu_test {

// Empty when a CUDA device can be used, else why not (no driver, no
// device, ...), asked once per process.
const std::string& whyNoGpu();

// A fixture that skips its test, with the reason, where whyNoGpu() says.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!whyNoGpu().empty()) GTEST_SKIP() << "no usable CUDA device: " << whyNoGpu();
  }
};
template <typename Param>
class GpuTestWithParam : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!whyNoGpu().empty()) GTEST_SKIP() << "no usable CUDA device: " << whyNoGpu();
  }
};

#define SPCCL_CUDA_OK(call)                                                                      \
  do {                                                                                           \
    const cudaError_t spccl_status_ = (call);                                                    \
    ASSERT_EQ(spccl_status_, cudaSuccess) << #call << ": " << cudaGetErrorString(spccl_status_); \
  } while (0)

// Device memory of `bytes` bytes (at least 1, so that a pointer exists for
// empty inputs too), freed on destruction.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }
  cudaError_t upload(const void* host, size_t bytes, size_t offset = 0);
  cudaError_t download(void* host, size_t bytes, size_t offset = 0) const;

 private:
  void* data_ = nullptr;
};

// The element counts every kernel is tested at: 0, 1, odd, 2^k +- 1 around
// the vector and block widths, and a large one; capped by the environment
// variable SPCCL_GPU_TEST_MAX_COUNT (the sanitizer runs lower it, a long
// run raises it: 300000000 tests hundreds of millions).
std::vector<size_t> testCounts();

constexpr spcclDataType_t kAllTypes[] = {spcclInt8,    spcclUint8,   spcclInt32,   spcclUint32,
                                         spcclInt64,   spcclUint64,  spcclFloat16, spcclFloat32,
                                         spcclFloat64, spcclBfloat16};
constexpr spcclRedOp_t kAllOps[] = {spcclSum, spcclProd, spcclMax, spcclMin, spcclAvg};

// count elements of `type`: mostly random bit patterns, mixed with the
// adversarial values of the type (integers: 0, -1, min, max; floats: +-0,
// +-inf, NaNs with payloads and signalling ones, subnormals, the largest
// and smallest normals, values that round to a tie in f16/bf16).
// zeroFraction of the elements are exactly zero (+0 or -0 for floats).
std::vector<unsigned char> randomElements(spcclDataType_t type, size_t count, std::mt19937_64& rng,
                                          double zeroFraction = 0.0);

// "" when equal, else where they first differ and how many bytes differ.
std::string firstDifference(const std::vector<unsigned char>& expected,
                            const std::vector<unsigned char>& actual, size_t elementBytes);

}  // namespace spccl::gpu_test

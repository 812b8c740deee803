// The token all-reduces' inputs for the emulated-driver tests
// (test_device_token*.cc): a buffer of emulated memory of any kind, and
// deterministic tensors, scores and masks of kTokens x kHidden.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "emulated_ranks.h"
#include "kernels/zen_hash.h"
#include "spccl.h"

namespace spccl::testing {

// bytes of emulated memory of `kind` (EmuCudaDevice, EmuCudaManaged) or,
// with kind -1, of the host.
class Buffer {
 public:
  Buffer(size_t bytes, int kind)
      : bytes_(bytes),
        kind_(kind),
        data_(kind < 0 ? std::malloc(std::max<size_t>(bytes, 1))
                       : emuCudaAlloc(std::max<size_t>(bytes, 1), kind)) {}
  ~Buffer() {
    if (kind_ < 0)
      std::free(data_);
    else
      emuCudaFree(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  void set(const void* values) const {
    if (kind_ != EmuCudaDevice) {
      std::memcpy(data_, values, bytes_);
      return;
    }
    cuMemcpyHtoDAsync_v2(reinterpret_cast<uint64_t>(data_), values, bytes_, nullptr);
    cuStreamSynchronize(nullptr);
  }
  std::vector<unsigned char> get(void* stream) const {
    std::vector<unsigned char> out(bytes_);
    cuStreamSynchronize(stream);
    if (kind_ != EmuCudaDevice) {
      std::memcpy(out.data(), data_, bytes_);
      return out;
    }
    cuMemcpyDtoHAsync_v2(out.data(), reinterpret_cast<uint64_t>(data_), bytes_, nullptr);
    cuStreamSynchronize(nullptr);
    return out;
  }

 private:
  size_t bytes_;
  int kind_;
  void* data_;
};

// The inputs' mixer: the library's (kernels/zen_hash.h).
using kernels::mix64;

constexpr size_t kTokens = 203;  // not a multiple of anything
constexpr size_t kHidden = 40;

// Rank `rank`'s tensor (any seed): values whose float sums depend on their order.
inline std::vector<unsigned char> tensorOf(int rank, spcclDataType_t type,
                                           size_t hidden = kHidden) {
  const size_t count = kTokens * hidden, size = spcclTypeSize(type);
  std::vector<unsigned char> bytes(count * size);
  for (size_t i = 0; i < count; ++i) {
    const float f = static_cast<float>(mix64(i * 7 + rank) % 20001) / 64.0f - 156.3f;
    if (type == spcclFloat32) {
      std::memcpy(&bytes[i * 4], &f, 4);
    } else {
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      const auto b = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[i * 2], &b, 2);
    }
  }
  return bytes;
}

// Rank `rank`'s scores (ties included: a few values only).
inline std::vector<float> scoresOf(int rank) {
  std::vector<float> scores(kTokens);
  for (size_t t = 0; t < kTokens; ++t) scores[t] = static_cast<float>(mix64(t * 31 + rank) % 50);
  return scores;
}

// The same mask on every rank: about `fraction` of the tokens kept.
inline std::vector<unsigned char> maskOf(double fraction) {
  std::vector<unsigned char> mask(kTokens);
  for (size_t t = 0; t < kTokens; ++t)
    mask[t] = mix64(t + 99) % 1000 < static_cast<uint64_t>(fraction * 1000) ? 1 : 0;
  return mask;
}

// Rank `rank`'s tensor (tensorOf) in emulated device memory.
class DeviceTensor {
 public:
  DeviceTensor(int rank, spcclDataType_t type, size_t hidden = kHidden)
      : DeviceTensor(tensorOf(rank, type, hidden)) {}
  void* data() const { return buffer_.data(); }
  std::vector<unsigned char> get(void* stream) const { return buffer_.get(stream); }

 private:
  explicit DeviceTensor(const std::vector<unsigned char>& values)
      : buffer_(values.size(), EmuCudaDevice) {
    buffer_.set(values.data());
  }
  Buffer buffer_;
};

}  // namespace spccl::testing

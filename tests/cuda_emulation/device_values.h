// Inputs and emulated device buffers of the device-resident collectives'
// tests (test_device_all_reduce.cc, test_device_collectives.cc): small
// integers (1..7) in every type, so that every type and op is exact
// whatever the order of reduction, and device memory filled and read
// through the emulated driver.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "emulated_ranks.h"
#include "spccl.h"

namespace spccl::testing {

// The small integer v (1..7) stored as `type`.
inline void encode(spcclDataType_t type, int v, unsigned char* out) {
  static const uint16_t kHalf[] = {0, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};
  static const uint16_t kBf16[] = {0, 0x3F80, 0x4000, 0x4040, 0x4080, 0x40A0, 0x40C0, 0x40E0};
  auto put = [out](auto x) { std::memcpy(out, &x, sizeof(x)); };
  switch (type) {
    case spcclInt8:
      return put(static_cast<int8_t>(v));
    case spcclUint8:
      return put(static_cast<uint8_t>(v));
    case spcclInt32:
      return put(static_cast<int32_t>(v));
    case spcclUint32:
      return put(static_cast<uint32_t>(v));
    case spcclInt64:
      return put(static_cast<int64_t>(v));
    case spcclUint64:
      return put(static_cast<uint64_t>(v));
    case spcclFloat16:
      return put(kHalf[v]);
    case spcclFloat32:
      return put(static_cast<float>(v));
    case spcclFloat64:
      return put(static_cast<double>(v));
    case spcclBfloat16:
      return put(kBf16[v]);
    default:
      return;
  }
}

// Rank `rank`'s input of `count` elements: element i is (3 rank + i) % 7 + 1.
inline std::vector<unsigned char> inputOf(int rank, spcclDataType_t type, size_t count) {
  const size_t size = spcclTypeSize(type);
  std::vector<unsigned char> bytes(count * size);
  for (size_t i = 0; i < count; ++i)
    encode(type, static_cast<int>((static_cast<size_t>(rank) * 3 + i) % 7) + 1, &bytes[i * size]);
  return bytes;
}

// What the emulation saw one call do on this rank.
struct Seen {
  uint64_t launches = 0, copiesOnDevice = 0, hostCopies = 0;
};

inline EmuCudaCounters now() { return emuCudaCounters(); }

inline Seen since(const EmuCudaCounters& before) {
  const EmuCudaCounters after = now();
  return Seen{after.kernelLaunches - before.kernelLaunches,
              after.copiesOnDevice - before.copiesOnDevice,
              after.copiesToDevice + after.copiesFromDevice - before.copiesToDevice -
                  before.copiesFromDevice};
}

// Emulated device memory of `bytes`, filled and read through the driver.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes)
      : bytes_(bytes), data_(emuCudaAlloc(bytes == 0 ? 1 : bytes, EmuCudaDevice)) {}
  ~DeviceBytes() { emuCudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* data() const { return data_; }
  unsigned char* at(size_t offset) const { return static_cast<unsigned char*>(data_) + offset; }
  void set(const std::vector<unsigned char>& values, size_t offset = 0) const {
    cuMemcpyHtoDAsync_v2(reinterpret_cast<uint64_t>(data_) + offset, values.data(), values.size(),
                         nullptr);
    cuStreamSynchronize(nullptr);
  }
  std::vector<unsigned char> get(void* stream) const {
    std::vector<unsigned char> out(bytes_);
    cuStreamSynchronize(stream);
    cuMemcpyDtoHAsync_v2(out.data(), reinterpret_cast<uint64_t>(data_), bytes_, nullptr);
    cuStreamSynchronize(nullptr);
    return out;
  }

 private:
  size_t bytes_;
  void* data_;
};

}  // namespace spccl::testing

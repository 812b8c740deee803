#include "gpu_test_support.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "kernels/cpu/half_float.h"

namespace spccl::gpu_test {

const std::string& whyNoGpu() {
  static const std::string reason = [] {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess) return std::string(cudaGetErrorString(status));
    if (devices == 0) return std::string("cudaGetDeviceCount found no device");
    return std::string();
  }();
  return reason;
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (cudaMalloc(&data_, std::max<size_t>(bytes, 1)) != cudaSuccess) data_ = nullptr;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

cudaError_t DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  if (data_ == nullptr) return cudaErrorMemoryAllocation;
  if (bytes == 0) return cudaSuccess;
  return cudaMemcpy(static_cast<char*>(data_) + offset, host, bytes, cudaMemcpyHostToDevice);
}

cudaError_t DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  if (data_ == nullptr) return cudaErrorMemoryAllocation;
  if (bytes == 0) return cudaSuccess;
  return cudaMemcpy(host, static_cast<const char*>(data_) + offset, bytes, cudaMemcpyDeviceToHost);
}

std::vector<size_t> testCounts() {
  size_t cap = (size_t{1} << 24) + 1;
  if (const char* env = std::getenv("SPCCL_GPU_TEST_MAX_COUNT"))
    cap = std::strtoull(env, nullptr, 10);
  std::vector<size_t> counts = {0,
                                1,
                                2,
                                3,
                                7,
                                15,
                                16,
                                17,
                                31,
                                33,
                                63,
                                64,
                                65,
                                127,
                                255,
                                256,
                                257,
                                1023,
                                1025,
                                4095,
                                4097,
                                65535,
                                65537,
                                (size_t{1} << 20) - 1,
                                (size_t{1} << 24) + 1,
                                size_t{300000000}};
  counts.erase(std::remove_if(counts.begin(), counts.end(), [cap](size_t c) { return c > cap; }),
               counts.end());
  return counts;
}

namespace {

bool isFloat(spcclDataType_t type) {
  return type == spcclFloat16 || type == spcclFloat32 || type == spcclFloat64 ||
         type == spcclBfloat16;
}

// Adversarial values as f64 bit patterns, narrowed per type below; the
// NaN payloads and signalling NaNs are written per type directly.
std::vector<double> specialDoubles() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0,
          -0.0,
          inf,
          -inf,
          1.0,
          -1.0,
          0.5,
          65504.0,
          65520.0,
          1e-45,
          -1e-45,
          1.4e-45,
          3.4e38,
          -3.4e38,
          1e308,
          -1e308,
          5e-324,
          6.1e-5,
          5.96e-8,
          2.98e-8,
          1.0009765625,
          1.00048828125 /* f16 tie */,
          1.00390625 /* bf16 tie */,
          2.2250738585072014e-308};
}

void writeSpecial(spcclDataType_t type, std::mt19937_64& rng, unsigned char* out) {
  static const std::vector<double> values = specialDoubles();
  const uint64_t pick = rng();
  const size_t choice = pick % (values.size() + 4);
  const bool nan = choice >= values.size();
  const uint64_t payload = (pick >> 32) | 1;  // a NaN needs a non-zero mantissa
  const bool quiet = choice % 2 == 0, negative = choice % 4 >= 2;
  switch (type) {
    case spcclFloat64: {
      const uint64_t bits = nan ? (uint64_t{0x7ff} << 52) | (quiet ? uint64_t{1} << 51 : 0) |
                                      (payload & ((uint64_t{1} << 51) - 1)) |
                                      (uint64_t{negative} << 63)
                                : std::bit_cast<uint64_t>(values[choice]);
      std::memcpy(out, &bits, 8);
      return;
    }
    case spcclFloat32: {
      const uint32_t bits = nan ? 0x7f800000u | (quiet ? 0x400000u : 0u) |
                                      (static_cast<uint32_t>(payload) & 0x3fffffu) |
                                      (uint32_t{negative} << 31)
                                : std::bit_cast<uint32_t>(static_cast<float>(values[choice]));
      std::memcpy(out, &bits, 4);
      return;
    }
    case spcclFloat16:
    case spcclBfloat16: {
      const bool half = type == spcclFloat16;
      const uint16_t nanBits =
          half ? static_cast<uint16_t>(0x7c00u | (quiet ? 0x200u : 0u) | (payload & 0x1ffu))
               : static_cast<uint16_t>(0x7f80u | (quiet ? 0x40u : 0u) | (payload & 0x3fu));
      const float f = static_cast<float>(values[choice % values.size()]);
      uint16_t bits = nan ? static_cast<uint16_t>(nanBits | (negative ? 0x8000u : 0u))
                          : (half ? kernels::floatToHalf(f) : kernels::floatToBfloat16(f));
      std::memcpy(out, &bits, 2);
      return;
    }
    default: {  // integers: 0, -1, min, max of the type (two's complement)
      const size_t bytes = spcclTypeSize(type);
      const bool isSigned = type == spcclInt8 || type == spcclInt32 || type == spcclInt64;
      uint64_t bits = 0;
      switch (pick % 4) {
        case 0:
          bits = 0;
          break;
        case 1:
          bits = ~uint64_t{0};
          break;
        case 2:
          bits = isSigned ? uint64_t{1} << (8 * bytes - 1) : 0;
          break;  // min
        default:
          bits = isSigned ? (uint64_t{1} << (8 * bytes - 1)) - 1 : ~uint64_t{0};
          break;
      }
      std::memcpy(out, &bits, bytes);
      return;
    }
  }
}

// A value of moderate size whose sums and products round (floats), or a
// small integer.
void writeModerate(spcclDataType_t type, std::mt19937_64& rng, unsigned char* out) {
  std::normal_distribution<double> normal(0.0, 100.0);
  const double v = normal(rng);
  switch (type) {
    case spcclFloat64: {
      std::memcpy(out, &v, 8);
      return;
    }
    case spcclFloat32: {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      return;
    }
    case spcclFloat16: {
      const uint16_t h = kernels::floatToHalf(static_cast<float>(v));
      std::memcpy(out, &h, 2);
      return;
    }
    case spcclBfloat16: {
      const uint16_t b = kernels::floatToBfloat16(static_cast<float>(v));
      std::memcpy(out, &b, 2);
      return;
    }
    default: {
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(out, &i, spcclTypeSize(type));
      return;
    }
  }
}

}  // namespace

std::vector<unsigned char> randomElements(spcclDataType_t type, size_t count, std::mt19937_64& rng,
                                          double zeroFraction) {
  const size_t bytes = spcclTypeSize(type);
  std::vector<unsigned char> out(count * bytes);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (size_t i = 0; i < count; ++i) {
    unsigned char* at = out.data() + i * bytes;
    const double u = unit(rng);
    if (u < zeroFraction) {
      std::memset(at, 0, bytes);
      if (isFloat(type) && (rng() & 1)) at[bytes - 1] = 0x80;  // -0
    } else if (u < zeroFraction + 0.05) {
      writeSpecial(type, rng, at);
    } else if (u < zeroFraction + 0.45) {
      const uint64_t bits = rng();
      std::memcpy(at, &bits, bytes);
    } else {
      writeModerate(type, rng, at);
    }
  }
  return out;
}

std::string firstDifference(const std::vector<unsigned char>& expected,
                            const std::vector<unsigned char>& actual, size_t elementBytes) {
  if (expected.size() != actual.size()) return "sizes differ";
  size_t first = expected.size(), differing = 0;
  for (size_t i = 0; i < expected.size(); i += elementBytes) {
    if (std::memcmp(expected.data() + i, actual.data() + i, elementBytes) == 0) continue;
    if (first == expected.size()) first = i;
    ++differing;
  }
  if (differing == 0) return "";
  std::ostringstream text;
  text << differing << " of " << expected.size() / elementBytes << " elements differ; first at "
       << first / elementBytes << ": expected 0x";
  text << std::hex << std::setfill('0');
  for (size_t b = elementBytes; b-- > 0;) text << std::setw(2) << int{expected[first + b]};
  text << ", got 0x";
  for (size_t b = elementBytes; b-- > 0;) text << std::setw(2) << int{actual[first + b]};
  return text.str();
}

}  // namespace spccl::gpu_test

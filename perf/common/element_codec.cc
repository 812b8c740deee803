#include "common/element_codec.h"

#include <cstdint>
#include <cstring>

#include "common/half_float.h"

namespace spccl::perf {

namespace {

// Buffers come from the user and need not be aligned for T: go through
// memcpy, which the compiler turns into a plain load or store.
template <typename T>
T loadRaw(const void* buffer, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void storeRaw(void* buffer, size_t index, T value) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
double loadInteger(const void* buffer, size_t index) {
  return static_cast<double>(loadRaw<T>(buffer, index));
}

template <typename T>
void storeInteger(void* buffer, size_t index, double value) {
  // Through int64 so that out-of-range values wrap (C++20 conversions are
  // modular) instead of being undefined.
  storeRaw<T>(buffer, index, static_cast<T>(static_cast<int64_t>(value)));
}

template <typename T>
double loadFloating(const void* buffer, size_t index) {
  return static_cast<double>(loadRaw<T>(buffer, index));
}

template <typename T>
void storeFloating(void* buffer, size_t index, double value) {
  storeRaw<T>(buffer, index, static_cast<T>(value));
}

double loadHalf(const void* buffer, size_t index) {
  return halfToFloat(loadRaw<uint16_t>(buffer, index));
}

void storeHalf(void* buffer, size_t index, double value) {
  storeRaw<uint16_t>(buffer, index, floatToHalf(static_cast<float>(value)));
}

double loadBfloat16(const void* buffer, size_t index) {
  return bfloat16ToFloat(loadRaw<uint16_t>(buffer, index));
}

void storeBfloat16(void* buffer, size_t index, double value) {
  storeRaw<uint16_t>(buffer, index, floatToBfloat16(static_cast<float>(value)));
}

template <typename T>
constexpr ElementCodec kIntegerCodec{loadInteger<T>, storeInteger<T>, 0.0};

constexpr ElementCodec kFloatCodec{loadFloating<float>, storeFloating<float>, 0x1p-24};
constexpr ElementCodec kDoubleCodec{loadFloating<double>, storeFloating<double>, 0x1p-53};
constexpr ElementCodec kHalfCodec{loadHalf, storeHalf, 0x1p-11};
constexpr ElementCodec kBfloat16Codec{loadBfloat16, storeBfloat16, 0x1p-8};

}  // namespace

const ElementCodec* elementCodecFor(spcclDataType_t type) {
  switch (type) {
    case spcclInt8:
      return &kIntegerCodec<int8_t>;
    case spcclUint8:
      return &kIntegerCodec<uint8_t>;
    case spcclInt32:
      return &kIntegerCodec<int32_t>;
    case spcclUint32:
      return &kIntegerCodec<uint32_t>;
    case spcclInt64:
      return &kIntegerCodec<int64_t>;
    case spcclUint64:
      return &kIntegerCodec<uint64_t>;
    case spcclFloat16:
      return &kHalfCodec;
    case spcclFloat32:
      return &kFloatCodec;
    case spcclFloat64:
      return &kDoubleCodec;
    case spcclBfloat16:
      return &kBfloat16Codec;
    default:
      return nullptr;
  }
}

double representable(const ElementCodec& codec, double value) {
  alignas(8) unsigned char scratch[8];
  codec.store(scratch, 0, value);
  return codec.load(scratch, 0);
}

}  // namespace spccl::perf

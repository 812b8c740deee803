#include "premul_sum.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/half_float.h"

namespace spccl::nccl {

ncclRedOp_t PreMulSumOps::create(const PreMulSumOp& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int handle = next_++;
  ops_[handle] = op;
  return static_cast<ncclRedOp_t>(handle);
}

bool PreMulSumOps::destroy(ncclRedOp_t op) {
  std::lock_guard<std::mutex> lock(mutex_);
  return ops_.erase(static_cast<int>(op)) == 1;
}

bool PreMulSumOps::find(ncclRedOp_t op, PreMulSumOp* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(static_cast<int>(op));
  if (it == ops_.end()) return false;
  *out = it->second;
  return true;
}

bool scalable(ncclDataType_t datatype) {
  return static_cast<int>(datatype) >= 0 && static_cast<int>(datatype) <= ncclBfloat16;
}

namespace {

// Integers multiply as unsigned of the same width: wrapping, as NCCL does,
// without signed overflow.
template <typename T>
void scale(const void* scalarBytes, const void* in, size_t count, void* out) {
  T scalar;
  std::memcpy(&scalar, scalarBytes, sizeof(T));
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (size_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(static_cast<U>(static_cast<U>(scalar) * static_cast<U>(src[i])));
  } else {
    for (size_t i = 0; i < count; ++i) dst[i] = scalar * src[i];
  }
}

template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
void scaleNarrow(const void* scalarBytes, const void* in, size_t count, void* out) {
  uint16_t scalarBits;
  std::memcpy(&scalarBits, scalarBytes, sizeof(scalarBits));
  const float scalar = toFloat(scalarBits);
  const uint16_t* src = static_cast<const uint16_t*>(in);
  uint16_t* dst = static_cast<uint16_t*>(out);
  for (size_t i = 0; i < count; ++i) dst[i] = fromFloat(scalar * toFloat(src[i]));
}

}  // namespace

void preMultiply(const PreMulSumOp& op, const void* in, size_t count, void* out) {
  const void* scalar = op.pointer != nullptr ? op.pointer : op.value;
  switch (op.datatype) {
    case ncclInt8:
      return scale<int8_t>(scalar, in, count, out);
    case ncclUint8:
      return scale<uint8_t>(scalar, in, count, out);
    case ncclInt32:
      return scale<int32_t>(scalar, in, count, out);
    case ncclUint32:
      return scale<uint32_t>(scalar, in, count, out);
    case ncclInt64:
      return scale<int64_t>(scalar, in, count, out);
    case ncclUint64:
      return scale<uint64_t>(scalar, in, count, out);
    case ncclFloat16:
      return scaleNarrow<kernels::halfToFloat, kernels::floatToHalf>(scalar, in, count, out);
    case ncclFloat32:
      return scale<float>(scalar, in, count, out);
    case ncclFloat64:
      return scale<double>(scalar, in, count, out);
    case ncclBfloat16:
      return scaleNarrow<kernels::bfloat16ToFloat, kernels::floatToBfloat16>(scalar, in, count,
                                                                             out);
    default:
      return;
  }
}

}  // namespace spccl::nccl

#include "common/sparse_check.h"

#include <cmath>
#include <cstring>

#include "common/element_codec.h"

namespace spccl::perf {

namespace {

bool isFloatingPoint(spcclDataType_t type) {
  return type == spcclFloat16 || type == spcclFloat32 || type == spcclFloat64 ||
         type == spcclBfloat16;
}

}  // namespace

MismatchRule mismatchRuleFor(spcclDataType_t type, spcclRedOp_t op, int nranks, bool exactInputs,
                             const double* absoluteSums) {
  MismatchRule rule;
  if (!isFloatingPoint(type) || (exactInputs && op == spcclSum)) return rule;
  const double unit = elementCodecFor(type)->epsilon;
  rule.bitwise = false;
  // An exact sum divided by n, or multiplied by a rounded 1/n: the two
  // differ by a few roundings of the quotient.
  rule.relative = 4.0 * unit;
  if (!exactInputs) {
    rule.absoluteSums = absoluteSums;
    rule.absoluteFactor = (nranks + 1) * unit / (op == spcclAvg ? nranks : 1);
  }
  return rule;
}

int64_t countMismatches(spcclDataType_t type, size_t count, const void* got, const void* want,
                        const MismatchRule& rule) {
  const size_t elementBytes = spcclTypeSize(type);
  const auto* gotBytes = static_cast<const unsigned char*>(got);
  const auto* wantBytes = static_cast<const unsigned char*>(want);
  int64_t wrong = 0;
  if (rule.bitwise) {
    for (size_t i = 0; i < count; ++i) {
      if (std::memcmp(gotBytes + i * elementBytes, wantBytes + i * elementBytes, elementBytes) !=
          0) {
        ++wrong;
      }
    }
    return wrong;
  }
  const ElementCodec& codec = *elementCodecFor(type);
  for (size_t i = 0; i < count; ++i) {
    const double wanted = codec.load(want, i);
    double allowed = rule.relative * std::fabs(wanted);
    if (rule.absoluteSums != nullptr) allowed += rule.absoluteFactor * rule.absoluteSums[i];
    // Negated so that a NaN counts as wrong.
    if (!(std::fabs(codec.load(got, i) - wanted) <= allowed)) ++wrong;
  }
  return wrong;
}

uint64_t contentHash(const void* bytes, size_t size) {
  const auto* data = static_cast<const unsigned char*>(bytes);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

size_t countNonZeros(spcclDataType_t type, size_t count, const void* buffer) {
  const ElementCodec& codec = *elementCodecFor(type);
  size_t nonZeros = 0;
  for (size_t i = 0; i < count; ++i) nonZeros += codec.load(buffer, i) != 0.0;
  return nonZeros;
}

}  // namespace spccl::perf

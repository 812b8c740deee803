// countNonZeros / extractNonZeros (sparse_kernels.h) on the CPU.
//
// Gradients are mostly zero, so the scan works in blocks of 64 elements:
// an OR-reduction over the block (a loop GCC vectorises at -O3) decides
// whether the block holds anything; only then is a 64-bit mask of its
// non-zeros built and walked with count-trailing-zeros, which writes exactly
// the non-zeros and never past the caller's countNonZeros() entries.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/sparse_kernels.h"

namespace spccl::kernels {
namespace {

constexpr size_t kBlock = 64;

template <typename Format>
bool blockHasNonZero(const typename Format::Storage* block, size_t length) {
  bool any = false;
  for (size_t i = 0; i < length; ++i) any |= !ZeroTest<Format>::isZero(block[i]);
  return any;
}

template <typename Format>
uint64_t nonZeroMask(const typename Format::Storage* block, size_t length) {
  uint64_t mask = 0;
  for (size_t i = 0; i < length; ++i) {
    mask |= static_cast<uint64_t>(!ZeroTest<Format>::isZero(block[i])) << i;
  }
  return mask;
}

template <typename Format>
size_t countElements(const void* dense, size_t count) {
  const auto* in = static_cast<const typename Format::Storage*>(dense);
  size_t nonZeros = 0;
  for (size_t i = 0; i < count; ++i) nonZeros += !ZeroTest<Format>::isZero(in[i]);
  return nonZeros;
}

template <typename Format>
size_t extractElements(const void* dense, size_t count, uint64_t* indices, void* values) {
  using Storage = typename Format::Storage;
  const auto* in = static_cast<const Storage*>(dense);
  auto* out = static_cast<Storage*>(values);
  size_t written = 0;
  for (size_t base = 0; base < count; base += kBlock) {
    const size_t length = count - base < kBlock ? count - base : kBlock;
    if (!blockHasNonZero<Format>(in + base, length)) continue;
    for (uint64_t mask = nonZeroMask<Format>(in + base, length); mask != 0; mask &= mask - 1) {
      const size_t i = base + static_cast<size_t>(std::countr_zero(mask));
      indices[written] = i;
      out[written] = in[i];
      ++written;
    }
  }
  return written;
}

}  // namespace

size_t countNonZeros(spcclDataType_t type, const void* dense, size_t count) {
  return withFormat(type, size_t{0},
                    [&](auto format) { return countElements<decltype(format)>(dense, count); });
}

size_t extractNonZeros(spcclDataType_t type, const void* dense, size_t count, uint64_t* indices,
                       void* values) {
  return withFormat(type, size_t{0}, [&](auto format) {
    return extractElements<decltype(format)>(dense, count, indices, values);
  });
}

}  // namespace spccl::kernels

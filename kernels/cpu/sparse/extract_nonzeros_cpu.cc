// countNonZeros / extractNonZeros (sparse_kernels.h) on the CPU.
//
// One pass over the input in blocks of 64 elements: the block's non-zero
// mask (nonzero_mask.h, SSE2 on x86-64) is walked with count-trailing-zeros,
// so work beyond the scan is proportional to the non-zeros. extractNonZeros
// writes at most `capacity` pairs and keeps counting after that, so a caller
// that guessed the size from an earlier call needs a second pass only when
// the guess was short.
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cpu/sparse/nonzero_mask.h"
#include "kernels/sparse_kernels.h"

namespace spccl::kernels {
namespace {

// Which full-block mask the scans use: SSE2 (every x86-64) or AVX2.
struct BaselineMask {
  template <typename Format>
  static uint64_t full(const typename Format::Storage* block) {
    return nonZeroMask64<Format>(block);
  }
};

template <typename Format, typename Mask>
inline uint64_t blockMask(const typename Format::Storage* in, size_t base, size_t count) {
  return count - base >= kMaskBlock ? Mask::template full<Format>(in + base)
                                    : nonZeroMaskScalar<Format>(in + base, count - base);
}

template <typename Format, typename Mask = BaselineMask>
size_t countElements(const void* dense, size_t count) {
  const auto* in = static_cast<const typename Format::Storage*>(dense);
  size_t nonZeros = 0;
  for (size_t base = 0; base < count; base += kMaskBlock)
    nonZeros += static_cast<size_t>(std::popcount(blockMask<Format, Mask>(in, base, count)));
  return nonZeros;
}

template <typename Format, typename Mask = BaselineMask>
size_t extractElements(const void* dense, size_t count, uint64_t* indices, void* values,
                       size_t capacity) {
  using Storage = typename Format::Storage;
  const auto* in = static_cast<const Storage*>(dense);
  auto* out = static_cast<Storage*>(values);
  size_t found = 0;
  for (size_t base = 0; base < count; base += kMaskBlock) {
    uint64_t mask = blockMask<Format, Mask>(in, base, count);
    // (No popcount per block on the fast path: without -mpopcnt it is a
    // libgcc call, 6 % of an HC call at d = 1 %.)
    if (found + kMaskBlock > capacity) {  // write what fits, count the rest
      for (; mask != 0 && found < capacity; mask &= mask - 1, ++found) {
        const size_t i = base + static_cast<size_t>(std::countr_zero(mask));
        indices[found] = i;
        out[found] = in[i];
      }
      found += static_cast<size_t>(std::popcount(mask));
      continue;
    }
    for (; mask != 0; mask &= mask - 1, ++found) {
      const size_t i = base + static_cast<size_t>(std::countr_zero(mask));
      indices[found] = i;
      out[found] = in[i];
    }
  }
  return found;
}

// The bitmap's word for a block is its non-zero mask (bit i of byte i/8 is
// element base + i, little-endian); the values are compacted without a
// branch per element when the block is dense enough that a loop over its
// set bits would mispredict (HC's dense stages run at d >= 1/8).
template <typename Format>
size_t compactElements(const void* dense, size_t count, unsigned char* bitmap, void* values) {
  using Storage = typename Format::Storage;
  const auto* in = static_cast<const Storage*>(dense);
  // values follow the bitmap inside a message, so they may be unaligned:
  // stored bytewise (memcpy of one element compiles to a plain move).
  auto* out = static_cast<unsigned char*>(values);
  auto store = [out](size_t slot, const Storage& value) {
    std::memcpy(out + slot * sizeof(Storage), &value, sizeof(Storage));
  };
  size_t found = 0;
  for (size_t base = 0; base < count; base += kMaskBlock) {
    const uint64_t mask = blockMask<Format, BaselineMask>(in, base, count);
    const size_t length = count - base < kMaskBlock ? count - base : kMaskBlock;
    std::memcpy(bitmap + base / 8, &mask, (length + 7) / 8);
    if (std::popcount(mask) >= 16 && length == kMaskBlock) {
      for (size_t i = 0; i < kMaskBlock; ++i) {
        store(found, in[base + i]);
        found += (mask >> i) & 1;
      }
      continue;
    }
    for (uint64_t m = mask; m != 0; m &= m - 1, ++found)
      store(found, in[base + static_cast<size_t>(std::countr_zero(m))]);
  }
  return found;
}

#if defined(SPCCL_NONZERO_AVX2)
// flatten: the scan and its mask are inlined here, so that the whole loop
// is compiled for AVX2 (an AVX2 function is never inlined into a baseline
// one, and a call per block of 64 elements cost more than the mask).
#define SPCCL_SCAN_AVX2 SPCCL_TARGET_AVX2 __attribute__((flatten))

struct Avx2Mask {
  template <typename Format>
  SPCCL_TARGET_AVX2 static uint64_t full(const typename Format::Storage* block) {
    return nonZeroMask64Avx2<Format>(block);
  }
};

template <typename Format>
SPCCL_SCAN_AVX2 size_t countElementsAvx2(const void* dense, size_t count) {
  return countElements<Format, Avx2Mask>(dense, count);
}

template <typename Format>
SPCCL_SCAN_AVX2 size_t extractElementsAvx2(const void* dense, size_t count, uint64_t* indices,
                                           void* values, size_t capacity) {
  return extractElements<Format, Avx2Mask>(dense, count, indices, values, capacity);
}

std::atomic<bool> baselineSelected{false};  // selectScanMask(ScanMask::Baseline)

bool haveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi");
  return have && !baselineSelected.load(std::memory_order_relaxed);
}
#endif

}  // namespace

void selectScanMask(ScanMask mask) {
#if defined(SPCCL_NONZERO_AVX2)
  baselineSelected.store(mask == ScanMask::Baseline, std::memory_order_relaxed);
#else
  (void)mask;
#endif
}

size_t compactNonZeros(spcclDataType_t type, const void* dense, size_t count, unsigned char* bitmap,
                       void* values) {
  return withFormat(type, size_t{0}, [&](auto format) {
    return compactElements<decltype(format)>(dense, count, bitmap, values);
  });
}

size_t countNonZeros(spcclDataType_t type, const void* dense, size_t count) {
  return withFormat(type, size_t{0}, [&](auto format) {
#if defined(SPCCL_NONZERO_AVX2)
    if (haveAvx2()) return countElementsAvx2<decltype(format)>(dense, count);
#endif
    return countElements<decltype(format)>(dense, count);
  });
}

size_t extractNonZeros(spcclDataType_t type, const void* dense, size_t count, uint64_t* indices,
                       void* values, size_t capacity) {
  return withFormat(type, size_t{0}, [&](auto format) {
#if defined(SPCCL_NONZERO_AVX2)
    if (haveAvx2())
      return extractElementsAvx2<decltype(format)>(dense, count, indices, values, capacity);
#endif
    return extractElements<decltype(format)>(dense, count, indices, values, capacity);
  });
}

}  // namespace spccl::kernels

// The word-level half of bit packing (bit_packing.h): a 64-bit word holding
// one code per byte (code j in byte j) and the same 8 codes packed (code j
// at bits [j*kBits, (j+1)*kBits)) convert into each other in three steps
// that halve or double the number of lanes: pairs of bytes, then of 16-bit
// lanes, then of 32-bit halves, each step moving the upper lane's bits next
// to the lower's. A few shifts and masks per 8 codes instead of one per
// code. Templated over the word: uint64_t, or a vector of them
// (bit_packing_avx2.cc) doing 4 groups at once; in place, since a 32-byte
// vector passed by value to a function not compiled for AVX changes the ABI.
//
// Host byte order is little-endian on every platform spccl builds for
// (frame.h assumes same-architecture peers); the word's low bytes are the
// stream's first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/compress/magnitude_lanes.h"  // SPCCL_ALWAYS_INLINE

namespace spccl::kernels::packed_words {

// `width` low bits set in every `lane`-bit lane.
constexpr uint64_t lanesMask(int width, int lane) {
  uint64_t mask = 0;
  for (int shift = 0; shift < 64; shift += lane) mask |= ((uint64_t{1} << width) - 1) << shift;
  return mask;
}

template <int kBits, typename Word>
SPCCL_ALWAYS_INLINE void pack(Word& x) {
  constexpr int b = kBits;
  x = (x & lanesMask(8, 16)) | ((x & lanesMask(8, 16) << 8) >> (8 - b));
  x = (x & lanesMask(16, 32)) | ((x & lanesMask(16, 32) << 16) >> (16 - 2 * b));
  x = (x & lanesMask(32, 64)) | ((x & lanesMask(32, 64) << 32) >> (32 - 4 * b));
}

// The inverse; bits of x at and above 8 * kBits are ignored.
template <int kBits, typename Word>
SPCCL_ALWAYS_INLINE void unpack(Word& x) {
  constexpr int b = kBits;
  x = (x & lanesMask(4 * b, 64)) | ((x << (32 - 4 * b)) & (lanesMask(4 * b, 64) << 32));
  x = (x & lanesMask(2 * b, 32)) | ((x << (16 - 2 * b)) & (lanesMask(2 * b, 32) << 16));
  x = (x & lanesMask(b, 16)) | ((x << (8 - b)) & (lanesMask(b, 16) << 8));
}

// Groups of 8 codes, one word each. Group g's kBits bytes go to
// out + kBits g. While 8 bytes fit in the stream, they are written as one
// 8-byte store whose upper bytes (zero) the next group overwrites; the last
// groups write their kBits bytes only.
template <int kBits>
SPCCL_ALWAYS_INLINE void packGroups(const uint8_t* codes, size_t groups, unsigned char* out) {
  const size_t wide = groups * kBits >= 8 ? (groups * kBits - 8) / kBits + 1 : 0;
  size_t g = 0;
  for (; g < wide; ++g) {
    uint64_t x;
    std::memcpy(&x, codes + 8 * g, 8);
    pack<kBits>(x);
    std::memcpy(out + kBits * g, &x, 8);
  }
  for (; g < groups; ++g) {
    uint64_t x;
    std::memcpy(&x, codes + 8 * g, 8);
    pack<kBits>(x);
    std::memcpy(out + kBits * g, &x, kBits);
  }
}

// Reads 8 bytes at a time while they lie inside the groups' bytes.
template <int kBits>
SPCCL_ALWAYS_INLINE void unpackGroups(const unsigned char* in, size_t groups, uint8_t* codes) {
  const size_t wide = groups * kBits >= 8 ? (groups * kBits - 8) / kBits + 1 : 0;
  size_t g = 0;
  for (; g < wide; ++g) {
    uint64_t x;
    std::memcpy(&x, in + kBits * g, 8);
    unpack<kBits>(x);
    std::memcpy(codes + 8 * g, &x, 8);
  }
  for (; g < groups; ++g) {
    uint64_t x = 0;
    std::memcpy(&x, in + kBits * g, kBits);
    unpack<kBits>(x);
    std::memcpy(codes + 8 * g, &x, 8);
  }
}

// The codes after the last full group (fewer than 8), code by code.
inline void packRest(const uint8_t* codes, size_t rest, int bits, unsigned char* out) {
  if (rest == 0) return;
  uint64_t word = 0;
  for (size_t j = 0; j < rest; ++j) word |= static_cast<uint64_t>(codes[j]) << (j * bits);
  std::memcpy(out, &word, (rest * bits + 7) / 8);
}

inline void unpackRest(const unsigned char* in, size_t rest, int bits, uint8_t* codes) {
  if (rest == 0) return;
  uint64_t word = 0;
  std::memcpy(&word, in, (rest * bits + 7) / 8);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  for (size_t j = 0; j < rest; ++j) codes[j] = static_cast<uint8_t>((word >> (j * bits)) & mask);
}

// Kernel<kBits>::run(args...) with the width as a constant, so that the
// shifts, masks and copy lengths are constants.
template <template <int> class Kernel, typename... Args>
SPCCL_ALWAYS_INLINE void withWidth(int bits, Args... args) {
  // clang-format off
  switch (bits) {
    case 2: Kernel<2>::run(args...); break;
    case 3: Kernel<3>::run(args...); break;
    case 4: Kernel<4>::run(args...); break;
    case 5: Kernel<5>::run(args...); break;
    case 6: Kernel<6>::run(args...); break;
    case 7: Kernel<7>::run(args...); break;
    default: Kernel<8>::run(args...); break;
  }
  // clang-format on
}

}  // namespace spccl::kernels::packed_words

#include "kernels/cpu/compress/bit_packing.h"

#include <cstring>

namespace spccl::kernels {
namespace {

// Host byte order is little-endian on every platform spccl builds for
// (frame.h assumes same-architecture peers); the word's low bytes are the
// stream's first.
uint64_t packGroup(const uint8_t* codes, size_t n, int bits) {
  uint64_t word = 0;
  for (size_t j = 0; j < n; ++j) word |= static_cast<uint64_t>(codes[j]) << (j * bits);
  return word;
}

void unpackGroup(uint64_t word, size_t n, int bits, uint8_t* codes) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  for (size_t j = 0; j < n; ++j) codes[j] = static_cast<uint8_t>((word >> (j * bits)) & mask);
}

// A 64-bit word holding one code per byte (code j in byte j) and the same
// codes packed (code j at bits [j*kBits, (j+1)*kBits)) convert into each
// other in three steps that halve or double the number of lanes: pairs of
// bytes, then of 16-bit lanes, then of 32-bit halves, each step moving the
// upper lane's bits next to the lower's. A few shifts and masks per 8 codes
// instead of one shift per code.
// `width` low bits set in every `lane`-bit lane.
constexpr uint64_t lanesMask(int width, int lane) {
  uint64_t mask = 0;
  for (int shift = 0; shift < 64; shift += lane) mask |= ((uint64_t{1} << width) - 1) << shift;
  return mask;
}

template <int kBits>
uint64_t packWord(uint64_t x) {
  constexpr int b = kBits;
  x = (x & lanesMask(8, 16)) | ((x & lanesMask(8, 16) << 8) >> (8 - b));
  x = (x & lanesMask(16, 32)) | ((x & lanesMask(16, 32) << 16) >> (16 - 2 * b));
  return (x & lanesMask(32, 64)) | ((x & lanesMask(32, 64) << 32) >> (32 - 4 * b));
}

// The inverse; bits of x at and above 8 * kBits are ignored.
template <int kBits>
uint64_t unpackWord(uint64_t x) {
  constexpr int b = kBits;
  x = (x & lanesMask(4 * b, 64)) | ((x << (32 - 4 * b)) & (lanesMask(4 * b, 64) << 32));
  x = (x & lanesMask(2 * b, 32)) | ((x << (16 - 2 * b)) & (lanesMask(2 * b, 32) << 16));
  return (x & lanesMask(b, 16)) | ((x << (8 - b)) & (lanesMask(b, 16) << 8));
}

// Group g's kBits bytes go to out + kBits g. While 8 bytes fit in the
// stream, they are written as one 8-byte store whose upper bytes (zero) the
// next group overwrites; the last groups write their kBits bytes only.
template <int kBits>
void packFixed(const uint8_t* codes, size_t groups, unsigned char* out) {
  const size_t wide = groups * kBits >= 8 ? (groups * kBits - 8) / kBits + 1 : 0;
  size_t g = 0;
  for (; g < wide; ++g) {
    uint64_t x;
    std::memcpy(&x, codes + 8 * g, 8);
    x = packWord<kBits>(x);
    std::memcpy(out + kBits * g, &x, 8);
  }
  for (; g < groups; ++g) {
    uint64_t x;
    std::memcpy(&x, codes + 8 * g, 8);
    x = packWord<kBits>(x);
    std::memcpy(out + kBits * g, &x, kBits);
  }
}

// Reads 8 bytes at a time while they lie inside the groups' bytes.
template <int kBits>
void unpackFixed(const unsigned char* in, size_t groups, uint8_t* codes) {
  const size_t wide = groups * kBits >= 8 ? (groups * kBits - 8) / kBits + 1 : 0;
  size_t g = 0;
  for (; g < wide; ++g) {
    uint64_t x;
    std::memcpy(&x, in + kBits * g, 8);
    x = unpackWord<kBits>(x);
    std::memcpy(codes + 8 * g, &x, 8);
  }
  for (; g < groups; ++g) {
    uint64_t x = 0;
    std::memcpy(&x, in + kBits * g, kBits);
    x = unpackWord<kBits>(x);
    std::memcpy(codes + 8 * g, &x, 8);
  }
}

}  // namespace

// The width is a template argument in the full groups so that the shifts
// and the copy length are constants.
void packCodes(const uint8_t* codes, size_t count, int bits, unsigned char* out) {
  const size_t groups = count / 8;
  switch (bits) {
    case 2: packFixed<2>(codes, groups, out); break;
    case 3: packFixed<3>(codes, groups, out); break;
    case 4: packFixed<4>(codes, groups, out); break;
    case 5: packFixed<5>(codes, groups, out); break;
    case 6: packFixed<6>(codes, groups, out); break;
    case 7: packFixed<7>(codes, groups, out); break;
    default: packFixed<8>(codes, groups, out); break;
  }
  const size_t rest = count - 8 * groups;
  if (rest == 0) return;
  const uint64_t word = packGroup(codes + 8 * groups, rest, bits);
  std::memcpy(out + bits * groups, &word, (rest * bits + 7) / 8);
}

void unpackCodes(const unsigned char* in, size_t count, int bits, uint8_t* codes) {
  const size_t groups = count / 8;
  switch (bits) {
    case 2: unpackFixed<2>(in, groups, codes); break;
    case 3: unpackFixed<3>(in, groups, codes); break;
    case 4: unpackFixed<4>(in, groups, codes); break;
    case 5: unpackFixed<5>(in, groups, codes); break;
    case 6: unpackFixed<6>(in, groups, codes); break;
    case 7: unpackFixed<7>(in, groups, codes); break;
    default: unpackFixed<8>(in, groups, codes); break;
  }
  const size_t rest = count - 8 * groups;
  if (rest == 0) return;
  uint64_t word = 0;
  std::memcpy(&word, in + bits * groups, (rest * bits + 7) / 8);
  unpackGroup(word, rest, bits, codes + 8 * groups);
}

}  // namespace spccl::kernels

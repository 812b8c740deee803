#include "kernels/cpu/compress/bit_packing.h"

#include <cstring>

namespace spccl::kernels {
namespace {

template <int kBits>
void packFixed(const uint8_t* codes, size_t groups, unsigned char* out) {
  for (size_t g = 0; g < groups; ++g) {
    const uint64_t word = packGroup(codes + 8 * g, 8, kBits);
    std::memcpy(out + kBits * g, &word, kBits);
  }
}

template <int kBits>
void unpackFixed(const unsigned char* in, size_t groups, uint8_t* codes) {
  for (size_t g = 0; g < groups; ++g) {
    uint64_t word = 0;
    std::memcpy(&word, in + kBits * g, kBits);
    unpackGroup(word, 8, kBits, codes + 8 * g);
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

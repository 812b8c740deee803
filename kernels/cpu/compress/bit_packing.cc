// Bit packing with 64-bit words (packed_words.h), for any x86-64 CPU.
#include "kernels/cpu/compress/bit_packing.h"

#include "kernels/cpu/compress/packed_words.h"

namespace spccl::kernels {
namespace {

template <int kBits>
struct PackGroups {
  static void run(const uint8_t* codes, size_t groups, unsigned char* out) {
    packed_words::packGroups<kBits>(codes, groups, out);
  }
};

template <int kBits>
struct UnpackGroups {
  static void run(const unsigned char* in, size_t groups, uint8_t* codes) {
    packed_words::unpackGroups<kBits>(in, groups, codes);
  }
};

}  // namespace

void packCodes(const uint8_t* codes, size_t count, int bits, unsigned char* out) {
  const size_t groups = count / 8;
  packed_words::withWidth<PackGroups>(bits, codes, groups, out);
  packed_words::packRest(codes + 8 * groups, count - 8 * groups, bits, out + bits * groups);
}

void unpackCodes(const unsigned char* in, size_t count, int bits, uint8_t* codes) {
  const size_t groups = count / 8;
  packed_words::withWidth<UnpackGroups>(bits, in, groups, codes);
  packed_words::unpackRest(in + bits * groups, count - 8 * groups, bits, codes + 8 * groups);
}

}  // namespace spccl::kernels

// Bit packing with AVX2: packed_words.h's steps on 4 groups of 8 codes at
// once (one 64-bit lane each), the groups' bytes moved between the stream
// and the lanes by one byte shuffle per 128-bit half. The groups left over
// (fewer than 4, or too close to the end of the stream for a 16-byte access)
// go through the 64-bit words.
#include "kernels/cpu/compress/bit_packing.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/compress/packed_words.h"

namespace spccl::kernels {
namespace {

#define SPCCL_TARGET_AVX2 __attribute__((target("avx2")))

using Lanes = uint64_t __attribute__((vector_size(32)));

// Byte i of a 128-bit half: the i-th byte of group 0 then of group 1, the
// two groups starting kBits bytes apart in the stream (packed) or 8 apart
// in the lanes (codes); -1 writes zero.
template <int kBits>
SPCCL_TARGET_AVX2 __m256i streamToLanes() {
  alignas(32) int8_t index[32];
  for (int i = 0; i < 16; ++i)
    index[i] = index[16 + i] = static_cast<int8_t>(i < 8 ? i : kBits + i - 8);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(index));
}

template <int kBits>
SPCCL_TARGET_AVX2 __m256i lanesToStream() {
  alignas(32) int8_t index[32];
  for (int i = 0; i < 16; ++i) {
    const int8_t from = static_cast<int8_t>(i < kBits ? i : i < 2 * kBits ? 8 + i - kBits : -1);
    index[i] = index[16 + i] = from;
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(index));
}

// Groups g..g+3 read stream bytes [kBits g, kBits g + 2 kBits + 16), so the
// vector loop runs while that lies inside the groups' bytes; packing writes
// the same range (its stores' upper bytes, zero, are overwritten later).
template <int kBits>
size_t vectorGroups(size_t groups) {
  const size_t bytes = groups * kBits;
  if (bytes < 2 * size_t{kBits} + 16) return 0;
  return std::min(groups, (bytes - 2 * size_t{kBits} - 16) / kBits + 1) / 4 * 4;
}

template <int kBits>
struct PackGroupsAvx2 {
  SPCCL_TARGET_AVX2 static void run(const uint8_t* codes, size_t groups, unsigned char* out) {
    const __m256i shuffle = lanesToStream<kBits>();
    const size_t vector = vectorGroups<kBits>(groups);
    for (size_t g = 0; g < vector; g += 4) {
      Lanes x = reinterpret_cast<Lanes>(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 8 * g)));
      packed_words::pack<kBits>(x);
      const __m256i packed = _mm256_shuffle_epi8(reinterpret_cast<__m256i>(x), shuffle);
      unsigned char* at = out + kBits * g;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at), _mm256_castsi256_si128(packed));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at + 2 * size_t{kBits}),
                       _mm256_extracti128_si256(packed, 1));
    }
    packed_words::packGroups<kBits>(codes + 8 * vector, groups - vector, out + kBits * vector);
  }
};

template <int kBits>
struct UnpackGroupsAvx2 {
  SPCCL_TARGET_AVX2 static void run(const unsigned char* in, size_t groups, uint8_t* codes) {
    const __m256i shuffle = streamToLanes<kBits>();
    const size_t vector = vectorGroups<kBits>(groups);
    for (size_t g = 0; g < vector; g += 4) {
      const unsigned char* at = in + kBits * g;
      const __m256i bytes = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at))),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 2 * size_t{kBits})), 1);
      Lanes x = reinterpret_cast<Lanes>(_mm256_shuffle_epi8(bytes, shuffle));
      packed_words::unpack<kBits>(x);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + 8 * g), reinterpret_cast<__m256i>(x));
    }
    packed_words::unpackGroups<kBits>(in + kBits * vector, groups - vector, codes + 8 * vector);
  }
};

}  // namespace

void packCodesAvx2(const uint8_t* codes, size_t count, int bits, unsigned char* out) {
  const size_t groups = count / 8;
  packed_words::withWidth<PackGroupsAvx2>(bits, codes, groups, out);
  packed_words::packRest(codes + 8 * groups, count - 8 * groups, bits, out + bits * groups);
}

void unpackCodesAvx2(const unsigned char* in, size_t count, int bits, uint8_t* codes) {
  const size_t groups = count / 8;
  packed_words::withWidth<UnpackGroupsAvx2>(bits, in, groups, codes);
  packed_words::unpackRest(in + bits * groups, count - 8 * groups, bits, codes + 8 * groups);
}

}  // namespace spccl::kernels
#endif

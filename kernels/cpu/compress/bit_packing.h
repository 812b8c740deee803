// Codes of any width 2..8 bits packed LSB-first into a byte stream (code i
// occupies bits [i*bits, (i+1)*bits)), the layout of kernels.h. Eight codes
// fill exactly `bits` bytes, so both directions work a group of 8 at a
// time (packed_words.h), and any run of codes that starts at a multiple of
// 8 starts on a byte boundary.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace spccl::kernels {

// n <= 8 codes into the low n*bits bits of a word. Host byte
// order is little-endian on every platform spccl builds for (frame.h
// assumes same-architecture peers), and so is a GPU's: the word's low bytes
// are the stream's first.
SPCCL_HOST_DEVICE inline uint64_t packGroup(const uint8_t* codes, size_t n, int bits) {
  uint64_t word = 0;
  for (size_t j = 0; j < n; ++j) word |= static_cast<uint64_t>(codes[j]) << (j * bits);
  return word;
}

// out gets packedCodeBytes(bits, count) bytes, and nothing past them.
// codes[i] < 2^bits.
void packCodes(const uint8_t* codes, size_t count, int bits, unsigned char* out);
// codes gets count codes read from in, which is read no further than
// packedCodeBytes(bits, count).
void unpackCodes(const unsigned char* in, size_t count, int bits, uint8_t* codes);

#if defined(__x86_64__) || defined(__i386__)
// The same bytes with AVX2 (bit_packing_avx2.cc); only on a CPU that has it.
void packCodesAvx2(const uint8_t* codes, size_t count, int bits, unsigned char* out);
void unpackCodesAvx2(const unsigned char* in, size_t count, int bits, uint8_t* codes);
#endif

}  // namespace spccl::kernels

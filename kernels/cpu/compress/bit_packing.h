// Codes of any width 2..8 bits packed LSB-first into a byte stream (code i
// occupies bits [i*bits, (i+1)*bits)), the layout of kernels.h. Eight codes
// fill exactly `bits` bytes, so both directions work a group of 8 at a
// time through a 64-bit word, and any run of codes that starts at a
// multiple of 8 starts on a byte boundary.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spccl::kernels {

// out gets packedCodeBytes(bits, count) bytes. codes[i] < 2^bits.
void packCodes(const uint8_t* codes, size_t count, int bits, unsigned char* out);
// codes gets count codes read from in.
void unpackCodes(const unsigned char* in, size_t count, int bits, uint8_t* codes);

}  // namespace spccl::kernels

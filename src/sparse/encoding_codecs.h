// The four wire encodings of encoding.h, one file each, behind the header
// handling of encoding.cc. A message is
//   [encoding u8][nnz u64][universe u64] body
// (little-endian); the body layouts are described in encoding.h. Encoders
// write exactly bodyBytes(); decoders see a body whose header encoding.cc
// has checked (known encoding, universe as expected, nnz <= universe) and
// must check the rest themselves, reading nothing beyond `bytes`.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/sparse_kernels.h"
#include "sparse/encoding.h"
#include "spccl.h"

namespace spccl::sparse {

static_assert(std::endian::native == std::endian::little, "wire formats are little-endian");

constexpr size_t kMessageHeaderBytes = 1 + 8 + 8;

struct MessageBody {
  const unsigned char* data;
  size_t bytes;
  uint64_t nnz;
  uint64_t universe;
  size_t valueBytes;
};

// Checks a message's header (known encoding, universe as expected, nnz <=
// universe) and points *body at what follows it.
spcclResult_t readMessageHeader(const unsigned char* data, size_t bytes, uint64_t universe,
                                size_t valueBytes, Encoding* encoding, MessageBody* body);
// Writes the header at out; returns kMessageHeaderBytes.
size_t writeMessageHeader(Encoding encoding, size_t nnz, uint64_t universe, unsigned char* out);

// Coo: positions as u32 when universe <= 2^32, else u64; then the values.
size_t cooPositionBytes(uint64_t universe);
void encodeCoo(const uint64_t* positions, const unsigned char* values, size_t nnz,
               uint64_t universe, size_t valueBytes, unsigned char* out);
spcclResult_t decodeCoo(const MessageBody& body, std::vector<uint64_t>* positions,
                        std::vector<unsigned char>* values);

// Bitmap: ceil(U/8) bytes, bit i (byte i/8, bit i%8) = position i present;
// then the values in ascending position order.
// ceil(U/8) without the wrap of (U + 7) / 8 for a universe within 7 of
// 2^64, which made a 0-byte map (the receiver read before its message,
// the sender wrote past its buffer).
constexpr size_t bitmapMapBytes(uint64_t universe) {
  return static_cast<size_t>(universe / 8 + (universe % 8 != 0));
}
void encodeBitmap(const uint64_t* positions, const unsigned char* values, size_t nnz,
                  uint64_t universe, size_t valueBytes, unsigned char* out);
spcclResult_t decodeBitmap(const MessageBody& body, std::vector<uint64_t>* positions,
                           std::vector<unsigned char>* values);

// Packed: nnz LEB128 varints, the first position then each gap minus one
// (positions are unique, so consecutive ones cost a zero byte); then the
// values.
size_t packedPositionBytes(const uint64_t* sortedPositions, size_t nnz);
size_t varintBytes(uint64_t value);
void encodePacked(const uint64_t* positions, const unsigned char* values, size_t nnz,
                  size_t valueBytes, unsigned char* out);
// encodePacked in one pass, without packedPositionBytes' size pass: the
// body is written only if it is smaller than `limit` bytes (out holds limit
// + kPackedVarintSlack bytes). Returns its size, or 0 when it would take
// limit bytes or more (out's contents are then unspecified).
constexpr size_t kPackedVarintSlack = 10;  // ceil(64 / 7): the longest varint
size_t encodePackedWithin(const uint64_t* positions, const unsigned char* values, size_t nnz,
                          size_t valueBytes, size_t limit, unsigned char* out);
spcclResult_t decodePacked(const MessageBody& body, std::vector<uint64_t>* positions,
                           std::vector<unsigned char>* values);
// A Packed body's varints and values, for a merge that reads them where
// they lie (kernels::mergeSumGapCoded, which checks the varints); false
// when the body is too short for nnz of them (decodePacked's first check).
bool packedParts(const MessageBody& body, kernels::GapCodedPairs* parts);

// Dense: U values, absent positions zero. Decoding yields the positions
// whose value has a non-zero byte (a present +0 or integer 0 adds nothing;
// -0.0 has its sign bit, so it is kept).
void encodeDense(const uint64_t* positions, const unsigned char* values, size_t nnz,
                 uint64_t universe, size_t valueBytes, unsigned char* out);
spcclResult_t decodeDense(const MessageBody& body, std::vector<uint64_t>* positions,
                          std::vector<unsigned char>* values);

}  // namespace spccl::sparse

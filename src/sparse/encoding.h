// Wire encodings of a set of (position, value) pairs over a universe of U
// positions (a partition's |I_p|, or M). Chosen per message from its own
// count (docs/algorithms.md 2.6 (2)) and named in the frame header's flags, so no
// message is ever larger than its dense form.
//   Coo:    nnz x (position as u32 when U <= 2^32, else u64) + values
//   Bitmap: ceil(U/8) bytes, bit i = position i present, + values in
//           ascending position order (with a ZenHash partition this is
//           Zen's hash bitmap, Algorithm 2)
//   Packed: positions ascending, delta-coded as LEB128 varints, + values
//   Dense:  U values (absent positions are zero)
// Every encoded message starts with a small header (encoding, nnz, U) so a
// decoder can check it against what it expects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl::sparse {

// The values of spcclSparseEncoding_t's (Auto, 0, lets each message pick).
enum class Encoding : uint8_t { Coo = 1, Bitmap = 2, Packed = 3, Dense = 4 };
// "coo", "bitmap", "packed", "dense"; "unknown" for anything else.
const char* encodingName(Encoding encoding);
// The same for the public enum, and "auto" for spcclEncodingAuto
// (spcclSparseEncodingName, the perf binaries' -E flag).
const char* sparseEncodingName(spcclSparseEncoding_t encoding);

// Exact encoded size in bytes for Coo, Bitmap and Dense; for Packed the
// size needs the positions: pass them (else an upper bound is returned).
size_t encodedBytes(Encoding encoding, size_t nnz, uint64_t universe, size_t valueBytes,
                    const uint64_t* sortedPositions = nullptr);
// The smallest encoding among `allowed` (a bit mask of 1 << Encoding).
Encoding cheapestEncoding(size_t nnz, uint64_t universe, size_t valueBytes,
                          const uint64_t* sortedPositions, unsigned allowed);
constexpr unsigned kAllEncodings = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4);

// positions: unique, ascending (callers sort first; Dense and Bitmap are
// built from any order but the values must follow position order).
// Appends to *out; returns the bytes appended.
size_t encode(Encoding encoding, const uint64_t* positions, const void* values, size_t nnz,
              uint64_t universe, size_t valueBytes, std::vector<unsigned char>* out);
// cheapestEncoding, then encode, measuring Packed's size only once (it
// takes a pass over the positions). Returns the encoding; *bytes: appended.
Encoding encodeCheapest(const uint64_t* positions, const void* values, size_t nnz,
                        uint64_t universe, size_t valueBytes, unsigned allowed,
                        std::vector<unsigned char>* out, size_t* bytes);

// encodeCheapest written at the front of *buffer instead of appended; the
// buffer only grows (a reused buffer is not zero-filled again by resize),
// so its size may exceed the message's: *bytes is the message's size.
Encoding encodeCheapestInto(const uint64_t* positions, const void* values, size_t nnz,
                            uint64_t universe, size_t valueBytes, unsigned allowed,
                            std::vector<unsigned char>* buffer, size_t* bytes);

// Decodes one message; positions ascending. Fails with spcclRemoteError on a
// malformed or truncated message, or one whose universe differs.
spcclResult_t decode(const unsigned char* data, size_t bytes, uint64_t universe, size_t valueBytes,
                     std::vector<uint64_t>* positions, std::vector<unsigned char>* values);

}  // namespace spccl::sparse

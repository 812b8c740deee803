// Packed (encoding.h): ascending positions as LEB128 varints of their gaps,
// 7 bits a byte, high bit = more. Dense runs cost one byte per position, a
// uniform spread of density d about log2(1/d)/7 bytes.
#include <bit>
#include <cstring>

#include "base/check.h"
#include "sparse/encoding_codecs.h"

namespace spccl::sparse {
namespace {

constexpr size_t kMaxVarintBytes = 10;  // ceil(64 / 7)

// Branch-free: 7 bits a byte, and one byte for 0 (a loop per byte cost a
// call and a mispredicted exit per pair in the size pass).
inline size_t varintLength(uint64_t value) {
  return static_cast<size_t>(std::bit_width(value | 1) + 6) / 7;
}

uint64_t gapBefore(const uint64_t* positions, size_t i) {
  return i == 0 ? positions[0] : positions[i] - positions[i - 1] - 1;
}

}  // namespace

size_t varintBytes(uint64_t value) { return varintLength(value); }

size_t packedPositionBytes(const uint64_t* sortedPositions, size_t nnz) {
  if (nnz == 0) return 0;
  size_t bytes = varintLength(sortedPositions[0]);
  for (size_t i = 1; i < nnz; ++i)
    bytes += varintLength(sortedPositions[i] - sortedPositions[i - 1] - 1);
  return bytes;
}

void encodePacked(const uint64_t* positions, const unsigned char* values, size_t nnz,
                  size_t valueBytes, unsigned char* out) {
  for (size_t i = 0; i < nnz; ++i) {
    uint64_t gap = gapBefore(positions, i);
    while (gap >= 0x80) {
      *out++ = static_cast<unsigned char>(gap | 0x80);
      gap >>= 7;
    }
    *out++ = static_cast<unsigned char>(gap);
  }
  if (nnz > 0) std::memcpy(out, values, nnz * valueBytes);  // values may be null
}

size_t encodePackedWithin(const uint64_t* positions, const unsigned char* values, size_t nnz,
                          size_t valueBytes, size_t limit, unsigned char* out) {
  const size_t valueTotal = nnz * valueBytes;
  if (valueTotal + nnz >= limit) return 0;  // a varint takes at least a byte
  const size_t positionLimit = limit - valueTotal;
  unsigned char* at = out;
  for (size_t i = 0; i < nnz; ++i) {
    uint64_t gap = gapBefore(positions, i);
    if (gap < 0x4000) {
      // One or two bytes, written without a branch on which (as in
      // decodePacked: at 1 % density that branch mispredicted per pair);
      // a second byte not needed is overwritten by what follows.
      const uint64_t twoBytes = gap >= 0x80 ? 1 : 0;
      at[0] = static_cast<unsigned char>(gap | (twoBytes << 7));
      at[1] = static_cast<unsigned char>(gap >> 7);
      at += 1 + twoBytes;
    } else {
      while (gap >= 0x80) {
        *at++ = static_cast<unsigned char>(gap | 0x80);
        gap >>= 7;
      }
      *at++ = static_cast<unsigned char>(gap);
    }
    // (Predictable: taken at most once.) The buffer has kMaxVarintBytes of
    // slack, so the varint that crosses the limit is written in bounds.
    if (static_cast<size_t>(at - out) >= positionLimit) return 0;
  }
  if (nnz > 0) std::memcpy(at, values, valueTotal);
  return static_cast<size_t>(at - out) + valueTotal;
}

bool packedParts(const MessageBody& body, kernels::GapCodedPairs* parts) {
  const unsigned __int128 valueTotal = static_cast<unsigned __int128>(body.nnz) * body.valueBytes;
  if (valueTotal + body.nnz > body.bytes) return false;
  const size_t varintBytes = body.bytes - static_cast<size_t>(valueTotal);
  *parts = {body.data, varintBytes, body.data + varintBytes, static_cast<size_t>(body.nnz)};
  return true;
}

spcclResult_t decodePacked(const MessageBody& body, std::vector<uint64_t>* positions,
                           std::vector<unsigned char>* values) {
  const unsigned __int128 valueTotal = static_cast<unsigned __int128>(body.nnz) * body.valueBytes;
  // Each varint takes at least one byte, which also bounds the allocation.
  if (valueTotal + body.nnz > body.bytes) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Packed message: body of %zu bytes too short for nnz %llu", body.bytes,
                      static_cast<unsigned long long>(body.nnz));
  }
  const size_t nnz = static_cast<size_t>(body.nnz);
  const size_t varintEnd = body.bytes - static_cast<size_t>(valueTotal);
  positions->resize(nnz);
  uint64_t* decoded = positions->data();
  size_t at = 0;
  uint64_t next = 0;  // smallest position the next entry may take
  for (size_t i = 0; i < nnz; ++i) {
    uint64_t gap = 0;
    // A one- or two-byte varint (a gap under 2^14: nearly all of them from
    // d = 1/16384 up) needs none of the long form's checks, and is read
    // without a branch on its length: at 1 % density a gap has one byte or
    // two about as often as not, and that branch mispredicted per pair.
    if (at + 2 <= varintEnd && (body.data[at] & body.data[at + 1] & 0x80) == 0) {
      const uint64_t low = body.data[at], high = body.data[at + 1];
      const uint64_t twoBytes = low >> 7;
      gap = (low & 0x7f) | ((high << 7) & (0 - twoBytes));
      at += 1 + twoBytes;
    } else if (at < varintEnd && body.data[at] < 0x80) {
      gap = body.data[at++];
    } else {
      for (size_t shift = 0;; shift += 7) {
        if (at == varintEnd || shift / 7 == kMaxVarintBytes || (shift == 63 && body.data[at] > 1)) {
          return SPCCL_FAIL(spcclRemoteError,
                            "sparse Packed message: varint %zu truncated or over 64 bits", i);
        }
        const unsigned char byte = body.data[at++];
        gap |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) break;
      }
    }
    if (next >= body.universe || gap >= body.universe - next) {
      return SPCCL_FAIL(spcclRemoteError,
                        "sparse Packed message: entry %zu lies beyond universe %llu", i,
                        static_cast<unsigned long long>(body.universe));
    }
    decoded[i] = next + gap;
    next = next + gap + 1;
  }
  if (at != varintEnd) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Packed message: %zu stray bytes between positions and values",
                      varintEnd - at);
  }
  values->assign(body.data + varintEnd, body.data + body.bytes);
  return spcclSuccess;
}

}  // namespace spccl::sparse

// Message header, exact sizes, the per-message choice of encoding (docs/algorithms.md
// 2.6 (2)) and dispatch to the codecs of encoding_codecs.h.
#include "sparse/encoding.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/check.h"
#include "sparse/encoding_codecs.h"

namespace spccl::sparse {
namespace {

bool isEncoding(unsigned char byte) {
  return byte >= static_cast<unsigned char>(Encoding::Coo) &&
         byte <= static_cast<unsigned char>(Encoding::Dense);
}

size_t bodyBytes(Encoding encoding, size_t nnz, uint64_t universe, size_t valueBytes,
                 const uint64_t* sortedPositions) {
  const size_t valueTotal = nnz * valueBytes;
  switch (encoding) {
    case Encoding::Coo:
      return nnz * cooPositionBytes(universe) + valueTotal;
    case Encoding::Bitmap:
      return bitmapMapBytes(universe) + valueTotal;
    case Encoding::Packed:
      // Without the positions: every gap is below U, so no varint is longer
      // than U - 1's.
      return (sortedPositions != nullptr ? packedPositionBytes(sortedPositions, nnz)
                                         : nnz * varintBytes(universe > 0 ? universe - 1 : 0)) +
             valueTotal;
    case Encoding::Dense:
      // Saturated: a wrapped product would make Dense look cheapest.
      return universe > SIZE_MAX / std::max<size_t>(valueBytes, 1)
                 ? SIZE_MAX
                 : static_cast<size_t>(universe) * valueBytes;
  }
  return 0;
}

}  // namespace

const char* encodingName(Encoding encoding) {
  switch (encoding) {
    case Encoding::Coo:
      return "coo";
    case Encoding::Bitmap:
      return "bitmap";
    case Encoding::Packed:
      return "packed";
    case Encoding::Dense:
      return "dense";
  }
  return "unknown";
}

static_assert(static_cast<int>(Encoding::Coo) == spcclEncodingCoo &&
              static_cast<int>(Encoding::Bitmap) == spcclEncodingBitmap &&
              static_cast<int>(Encoding::Packed) == spcclEncodingPacked &&
              static_cast<int>(Encoding::Dense) == spcclEncodingDense && spcclNumEncodings == 5);

const char* sparseEncodingName(spcclSparseEncoding_t encoding) {
  if (encoding == spcclEncodingAuto) return "auto";
  if (encoding < spcclEncodingCoo || encoding >= spcclNumEncodings) return "unknown";
  return encodingName(static_cast<Encoding>(encoding));
}

size_t encodedBytes(Encoding encoding, size_t nnz, uint64_t universe, size_t valueBytes,
                    const uint64_t* sortedPositions) {
  return kMessageHeaderBytes + bodyBytes(encoding, nnz, universe, valueBytes, sortedPositions);
}

namespace {

// Ties go to the cheaper decoder: Dense, then Bitmap, Coo, Packed. With no
// allowed encoding, Dense (always correct). *body: the winner's body bytes.
Encoding cheapestWithBody(size_t nnz, uint64_t universe, size_t valueBytes,
                          const uint64_t* sortedPositions, unsigned allowed, size_t* body) {
  constexpr Encoding kByDecodeCost[] = {Encoding::Dense, Encoding::Bitmap, Encoding::Coo,
                                        Encoding::Packed};
  Encoding best = Encoding::Dense;
  size_t bestBytes = SIZE_MAX;
  for (Encoding candidate : kByDecodeCost) {
    if ((allowed & (1u << static_cast<unsigned>(candidate))) == 0) continue;
    const size_t bytes = bodyBytes(candidate, nnz, universe, valueBytes, sortedPositions);
    if (bytes < bestBytes) {
      best = candidate;
      bestBytes = bytes;
    }
  }
  *body = best == Encoding::Dense && bestBytes == SIZE_MAX
              ? bodyBytes(Encoding::Dense, nnz, universe, valueBytes, nullptr)
              : bestBytes;
  return best;
}

// Where a message goes: appended to the vector, or (overwrite) written at
// its front, the vector only ever growing, so that a buffer reused call
// after call is not zero-filled again by resize each time (15 MB per HC
// call at d = 1 %, n = 8, 16 M f32).
class MessageSink {
 public:
  MessageSink(std::vector<unsigned char>* out, bool overwrite)
      : out_(out), overwrite_(overwrite), start_(overwrite ? 0 : out->size()) {}
  // Room for `bytes` bytes of message; valid until the next call.
  unsigned char* reserve(size_t bytes) {
    if (!overwrite_ || out_->size() < start_ + bytes) out_->resize(start_ + bytes);
    return out_->data() + start_;
  }
  // The message is `bytes` long.
  void finish(size_t bytes) {
    if (!overwrite_) out_->resize(start_ + bytes);
  }

 private:
  std::vector<unsigned char>* out_;
  bool overwrite_;
  size_t start_;
};

// Writes the header and a body of `body` bytes (bodyBytes' value).
size_t writeMessage(Encoding encoding, size_t body, const uint64_t* positions, const void* values,
                    size_t nnz, uint64_t universe, size_t valueBytes, MessageSink sink) {
  unsigned char* header = sink.reserve(kMessageHeaderBytes + body);
  sink.finish(kMessageHeaderBytes + body);
  unsigned char* dst = header + writeMessageHeader(encoding, nnz, universe, header);
  const auto* in = static_cast<const unsigned char*>(values);
  switch (encoding) {
    case Encoding::Coo:
      encodeCoo(positions, in, nnz, universe, valueBytes, dst);
      break;
    case Encoding::Bitmap:
      encodeBitmap(positions, in, nnz, universe, valueBytes, dst);
      break;
    case Encoding::Packed:
      encodePacked(positions, in, nnz, valueBytes, dst);
      break;
    case Encoding::Dense:
      encodeDense(positions, in, nnz, universe, valueBytes, dst);
      break;
  }
  return kMessageHeaderBytes + body;
}

}  // namespace

Encoding cheapestEncoding(size_t nnz, uint64_t universe, size_t valueBytes,
                          const uint64_t* sortedPositions, unsigned allowed) {
  size_t body = 0;
  return cheapestWithBody(nnz, universe, valueBytes, sortedPositions, allowed, &body);
}

size_t encode(Encoding encoding, const uint64_t* positions, const void* values, size_t nnz,
              uint64_t universe, size_t valueBytes, std::vector<unsigned char>* out) {
  return writeMessage(encoding, bodyBytes(encoding, nnz, universe, valueBytes, positions),
                      positions, values, nnz, universe, valueBytes, MessageSink(out, false));
}

namespace {

Encoding encodeCheapestTo(const uint64_t* positions, const void* values, size_t nnz,
                          uint64_t universe, size_t valueBytes, unsigned allowed, MessageSink sink,
                          size_t* bytes) {
  constexpr unsigned kPacked = 1u << static_cast<unsigned>(Encoding::Packed);
  const unsigned others = allowed & kAllEncodings & ~kPacked;
  if ((allowed & kPacked) != 0 && others != 0 && positions != nullptr && nnz > 0) {
    // Packed's size needs a pass over the positions (packedPositionBytes):
    // instead it is encoded at once, and kept only if smaller than the best
    // of the others (ties go to them, as in cheapestWithBody).
    size_t otherBody = 0;
    const Encoding other = cheapestWithBody(nnz, universe, valueBytes, nullptr, others, &otherBody);
    if (otherBody != SIZE_MAX && nnz * (valueBytes + 1) < otherBody) {
      unsigned char* header = sink.reserve(kMessageHeaderBytes + otherBody + kPackedVarintSlack);
      const size_t body =
          encodePackedWithin(positions, static_cast<const unsigned char*>(values), nnz, valueBytes,
                             otherBody, header + kMessageHeaderBytes);
      if (body != 0) {
        writeMessageHeader(Encoding::Packed, nnz, universe, header);
        sink.finish(kMessageHeaderBytes + body);
        *bytes = kMessageHeaderBytes + body;
        return Encoding::Packed;
      }
    }
    *bytes = writeMessage(other, otherBody, positions, values, nnz, universe, valueBytes, sink);
    return other;
  }
  size_t body = 0;
  const Encoding encoding = cheapestWithBody(nnz, universe, valueBytes, positions, allowed, &body);
  *bytes = writeMessage(encoding, body, positions, values, nnz, universe, valueBytes, sink);
  return encoding;
}

}  // namespace

Encoding encodeCheapest(const uint64_t* positions, const void* values, size_t nnz,
                        uint64_t universe, size_t valueBytes, unsigned allowed,
                        std::vector<unsigned char>* out, size_t* bytes) {
  return encodeCheapestTo(positions, values, nnz, universe, valueBytes, allowed,
                          MessageSink(out, false), bytes);
}

Encoding encodeCheapestInto(const uint64_t* positions, const void* values, size_t nnz,
                            uint64_t universe, size_t valueBytes, unsigned allowed,
                            std::vector<unsigned char>* buffer, size_t* bytes) {
  return encodeCheapestTo(positions, values, nnz, universe, valueBytes, allowed,
                          MessageSink(buffer, true), bytes);
}

spcclResult_t readMessageHeader(const unsigned char* data, size_t bytes, uint64_t universe,
                                size_t valueBytes, Encoding* encoding, MessageBody* body) {
  if (valueBytes == 0) {
    return SPCCL_FAIL(spcclInvalidArgument, "sparse decode: valueBytes must be positive");
  }
  if (data == nullptr || bytes < kMessageHeaderBytes) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse message truncated: %zu bytes, its header alone takes %zu", bytes,
                      kMessageHeaderBytes);
  }
  if (!isEncoding(data[0])) {
    return SPCCL_FAIL(spcclRemoteError, "sparse message names unknown encoding %u",
                      static_cast<unsigned>(data[0]));
  }
  *body = MessageBody{data + kMessageHeaderBytes, bytes - kMessageHeaderBytes, 0, 0, valueBytes};
  std::memcpy(&body->nnz, data + 1, sizeof(body->nnz));
  std::memcpy(&body->universe, data + 9, sizeof(body->universe));
  if (body->universe != universe) {
    return SPCCL_FAIL(
        spcclRemoteError, "sparse message over a universe of %llu positions, expected %llu",
        static_cast<unsigned long long>(body->universe), static_cast<unsigned long long>(universe));
  }
  if (body->nnz > universe) {
    return SPCCL_FAIL(spcclRemoteError, "sparse message claims nnz %llu > universe %llu",
                      static_cast<unsigned long long>(body->nnz),
                      static_cast<unsigned long long>(universe));
  }
  *encoding = static_cast<Encoding>(data[0]);
  return spcclSuccess;
}

spcclResult_t decode(const unsigned char* data, size_t bytes, uint64_t universe, size_t valueBytes,
                     std::vector<uint64_t>* positions, std::vector<unsigned char>* values) {
  Encoding encoding{};
  MessageBody body{};
  SPCCL_CHECK(readMessageHeader(data, bytes, universe, valueBytes, &encoding, &body));
  switch (encoding) {
    case Encoding::Coo:
      return decodeCoo(body, positions, values);
    case Encoding::Bitmap:
      return decodeBitmap(body, positions, values);
    case Encoding::Packed:
      return decodePacked(body, positions, values);
    case Encoding::Dense:
      return decodeDense(body, positions, values);
  }
  return spcclInternalError;
}

size_t writeMessageHeader(Encoding encoding, size_t nnz, uint64_t universe, unsigned char* out) {
  out[0] = static_cast<unsigned char>(encoding);
  const uint64_t count = nnz;
  std::memcpy(out + 1, &count, sizeof(count));
  std::memcpy(out + 9, &universe, sizeof(universe));
  return kMessageHeaderBytes;
}

}  // namespace spccl::sparse

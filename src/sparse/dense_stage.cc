// HC's dense stages (dense_stage.h).
#include "sparse/dense_stage.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/encoding_codecs.h"
#include "sparse/sparse_messages.h"
#include "sparse/value_copy.h"

namespace spccl::sparse {
namespace {

// Elements per block: a multiple of 64 (one bitmap word), small enough
// that the block stays in L1 between its expansion and the reduce.
constexpr size_t kBlock = 2048;

unsigned char* grownTo(std::vector<unsigned char>* buffer, size_t bytes) {
  if (buffer->size() < bytes) buffer->resize(bytes);
  return buffer->data();
}

// Writes the message's values for positions [base, base + length) into
// block (absent ones zero). A cursor per encoding walks the message once.
struct MessageCursor {
  Encoding encoding;
  const MessageBody& body;
  const SparseSet* pairs;  // Coo, Packed: decoded
  size_t valueAt = 0;      // next value (Bitmap) or pair (Coo, Packed)

  void fill(size_t base, size_t length, unsigned char* block) {
    const size_t s = body.valueBytes;
    if (encoding == Encoding::Dense) {
      std::memcpy(block, body.data + base * s, length * s);
      return;
    }
    std::memset(block, 0, length * s);
    if (encoding == Encoding::Bitmap) {
      const size_t mapBytes = bitmapMapBytes(body.universe);
      const unsigned char* values = body.data + mapBytes;
      for (size_t word = 0; word * 64 < length; ++word) {
        const size_t at = base / 8 + word * 8;
        uint64_t bits = 0;
        std::memcpy(&bits, body.data + at, std::min<size_t>(8, mapBytes - at));
        for (; bits != 0; bits &= bits - 1, ++valueAt)
          copyValue(block + (word * 64 + static_cast<size_t>(std::countr_zero(bits))) * s,
                    values + valueAt * s, s);
      }
      return;
    }
    const size_t end = base + length;
    for (; valueAt < pairs->size() && pairs->positions[valueAt] < end; ++valueAt)
      copyValue(block + (pairs->positions[valueAt] - base) * s, &pairs->values[valueAt * s], s);
  }
};

spcclResult_t checkBody(Encoding encoding, const MessageBody& body) {
  const size_t s = body.valueBytes;
  const size_t mapBytes = bitmapMapBytes(body.universe);
  // In 128 bits: a universe or nnz near 2^64 must not wrap to a small size.
  if (encoding == Encoding::Dense &&
      body.bytes != static_cast<unsigned __int128>(body.universe) * s)
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Dense message: body of %zu bytes, expected %llu values", body.bytes,
                      static_cast<unsigned long long>(body.universe));
  if (encoding != Encoding::Bitmap) return spcclSuccess;
  if (body.bytes != mapBytes + static_cast<unsigned __int128>(body.nnz) * s)
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Bitmap message: body of %zu bytes, expected %llu for nnz %llu",
                      body.bytes, static_cast<unsigned long long>(mapBytes + body.nnz * s),
                      static_cast<unsigned long long>(body.nnz));
  const unsigned tailBits = static_cast<unsigned>(body.universe & 7);
  if (tailBits != 0 && (body.data[mapBytes - 1] >> tailBits) != 0)
    return SPCCL_FAIL(spcclRemoteError, "sparse Bitmap message: bits set beyond universe %llu",
                      static_cast<unsigned long long>(body.universe));
  uint64_t set = 0;
  size_t at = 0;
  for (; at + 8 <= mapBytes; at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, body.data + at, 8);
    set += static_cast<uint64_t>(std::popcount(word));
  }
  for (; at < mapBytes; ++at) set += static_cast<uint64_t>(std::popcount(body.data[at]));
  if (set != body.nnz)
    return SPCCL_FAIL(
        spcclRemoteError, "sparse Bitmap message: %llu bits set but nnz %llu in its header",
        static_cast<unsigned long long>(set), static_cast<unsigned long long>(body.nnz));
  return spcclSuccess;
}

}  // namespace

Encoding encodeDenseTensor(spcclDataType_t type, const void* dense, uint64_t universe,
                           unsigned allowed, std::vector<unsigned char>* out, size_t* bytes,
                           size_t* nnz, SparseSet* scratch) {
  const size_t s = spcclTypeSize(type), count = static_cast<size_t>(universe);
  const size_t mapBytes = (count + 7) / 8;
  constexpr unsigned kBitmapOrDense = (1u << static_cast<unsigned>(Encoding::Bitmap)) |
                                      (1u << static_cast<unsigned>(Encoding::Dense));
  if (allowed & kBitmapOrDense) {
    unsigned char* message = grownTo(out, kMessageHeaderBytes + mapBytes + count * s);
    unsigned char* body = message + kMessageHeaderBytes;
    *nnz = kernels::compactNonZeros(type, dense, count, body, body + mapBytes);
    const Encoding encoding = cheapestEncoding(*nnz, universe, s, nullptr, allowed);
    if (encoding == Encoding::Bitmap || encoding == Encoding::Dense) {
      if (encoding == Encoding::Dense) std::memcpy(body, dense, count * s);
      writeMessageHeader(encoding, *nnz, universe, message);
      *bytes = encodedBytes(encoding, *nnz, universe, s);
      return encoding;
    }
  }
  // Coo or Packed (only when the options rule out Bitmap and Dense): the
  // pairs first.
  scratch->positions.resize(count);
  scratch->values.resize(count * s);
  *nnz = kernels::extractNonZeros(type, dense, count, scratch->positions.data(),
                                  scratch->values.data(), count);
  std::vector<unsigned char> encoded;
  size_t written = 0;
  const Encoding encoding = encodeCheapest(scratch->positions.data(), scratch->values.data(), *nnz,
                                           universe, s, allowed, &encoded, &written);
  std::memcpy(grownTo(out, written), encoded.data(), written);
  *bytes = written;
  return encoding;
}

uint64_t messagePairs(const unsigned char* data, size_t bytes) {
  if (bytes < kMessageHeaderBytes) return 0;
  uint64_t nnz = 0;
  std::memcpy(&nnz, data + 1, sizeof(nnz));
  return nnz;
}

spcclResult_t mergeMessageIntoDense(const kernels::KernelTable& table, spcclDataType_t type,
                                    const unsigned char* data, size_t bytes, uint8_t flags,
                                    uint64_t universe, unsigned allowed, int peer, DenseMerge how,
                                    void* acc, SparseSet* scratch) {
  SPCCL_CHECK(checkEncodingFlags(flags, allowed, peer));
  const size_t s = spcclTypeSize(type);
  Encoding encoding{};
  MessageBody body{};
  spcclResult_t valid = readMessageHeader(data, bytes, universe, s, &encoding, &body);
  if (valid == spcclSuccess)
    valid = encoding == Encoding::Coo || encoding == Encoding::Packed
                ? decode(data, bytes, universe, s, &scratch->positions, &scratch->values)
                : checkBody(encoding, body);
  // The decoders know bytes, not who sent them.
  if (valid != spcclSuccess)
    return SPCCL_FAIL(valid, "message from rank %d: %s", peer, threadLastError().c_str());
  MessageCursor cursor{encoding, body, scratch};
  alignas(64) unsigned char block[kBlock * sizeof(uint64_t)];
  auto* out = static_cast<unsigned char*>(acc);
  for (size_t base = 0; base < universe; base += kBlock) {
    const size_t length = std::min<size_t>(kBlock, static_cast<size_t>(universe) - base);
    unsigned char* target = out + base * s;
    cursor.fill(base, length, block);
    if (how == DenseMerge::Place)
      std::memcpy(target, block, length * s);
    else if (how == DenseMerge::AddLower)
      kernels::reduce(table, type, spcclSum, target, block, target, length);
    else
      kernels::reduce(table, type, spcclSum, target, target, block, length);
  }
  return spcclSuccess;
}

void denseToPairs(spcclDataType_t type, const void* dense, size_t count, SparseSet* out) {
  const size_t valueBytes = spcclTypeSize(type);
  out->positions.resize(count);
  out->values.resize(count * valueBytes);
  const size_t nnz = kernels::extractNonZeros(type, dense, count, out->positions.data(),
                                              out->values.data(), count);
  out->positions.resize(nnz);
  out->values.resize(nnz * valueBytes);
}

}  // namespace spccl::sparse

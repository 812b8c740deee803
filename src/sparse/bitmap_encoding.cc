// Bitmap (encoding.h). Over a ZenHash partition's positions this is Zen's
// hash bitmap (Algorithm 2): bit t stands for I_p[t], so the pull costs
// |I_p|/8 bytes per part and |G|/8 in total, whatever n is (Appendix B.3).
#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "base/check.h"
#include "sparse/encoding_codecs.h"
#include "sparse/value_copy.h"

namespace spccl::sparse {
namespace {

size_t bitmapBytes(uint64_t universe) { return bitmapMapBytes(universe); }

}  // namespace

// Positions may come in any order; the values go out in position order.
void encodeBitmap(const uint64_t* positions, const unsigned char* values, size_t nnz,
                  uint64_t universe, size_t valueBytes, unsigned char* out) {
  const size_t mapBytes = bitmapBytes(universe);
  std::memset(out, 0, mapBytes);
  bool ascending = true;
  for (size_t i = 0; i < nnz; ++i) {
    out[positions[i] >> 3] |= static_cast<unsigned char>(1u << (positions[i] & 7));
    ascending &= i == 0 || positions[i - 1] < positions[i];
  }
  unsigned char* valuesOut = out + mapBytes;
  if (ascending) {
    if (nnz > 0) std::memcpy(valuesOut, values, nnz * valueBytes);  // values may be null
    return;
  }
  std::vector<size_t> order(nnz);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return positions[a] < positions[b]; });
  for (size_t i = 0; i < nnz; ++i) {
    copyValue(valuesOut + i * valueBytes, values + order[i] * valueBytes, valueBytes);
  }
}

spcclResult_t decodeBitmap(const MessageBody& body, std::vector<uint64_t>* positions,
                           std::vector<unsigned char>* values) {
  const size_t mapBytes = bitmapBytes(body.universe);
  const unsigned __int128 expected =
      mapBytes + static_cast<unsigned __int128>(body.nnz) * body.valueBytes;
  if (expected != body.bytes) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Bitmap message: body of %zu bytes, expected %llu for universe "
                      "%llu and nnz %llu",
                      body.bytes, static_cast<unsigned long long>(expected),
                      static_cast<unsigned long long>(body.universe),
                      static_cast<unsigned long long>(body.nnz));
  }
  // Bits past the universe in the last byte must be clear, else a corrupted
  // map could name a position >= U.
  const unsigned tailBits = static_cast<unsigned>(body.universe & 7);
  if (tailBits != 0 && (body.data[mapBytes - 1] >> tailBits) != 0) {
    return SPCCL_FAIL(spcclRemoteError, "sparse Bitmap message: bits set beyond universe %llu",
                      static_cast<unsigned long long>(body.universe));
  }
  const size_t nnz = static_cast<size_t>(body.nnz);
  positions->resize(nnz);
  size_t found = 0;
  for (size_t word = 0; word * 8 < mapBytes; ++word) {
    uint64_t bits = 0;
    if (mapBytes - word * 8 >= 8) {
      std::memcpy(&bits, body.data + word * 8, 8);  // fixed size: one load, no call
    } else {
      std::memcpy(&bits, body.data + word * 8, mapBytes - word * 8);
    }
    for (; bits != 0; bits &= bits - 1) {
      if (found == nnz) {
        return SPCCL_FAIL(spcclRemoteError, "sparse Bitmap message: more bits set than its nnz %zu",
                          nnz);
      }
      (*positions)[found++] = word * 64 + static_cast<uint64_t>(std::countr_zero(bits));
    }
  }
  if (found != nnz) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Bitmap message: %zu bits set but nnz %zu in its header", found, nnz);
  }
  values->assign(body.data + mapBytes, body.data + body.bytes);
  return spcclSuccess;
}

}  // namespace spccl::sparse

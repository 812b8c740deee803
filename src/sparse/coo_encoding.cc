// Coo (encoding.h): the positions at the narrowest of u32/u64 that holds
// every position, then the values.
#include <cstring>

#include "base/check.h"
#include "sparse/encoding_codecs.h"

namespace spccl::sparse {

size_t cooPositionBytes(uint64_t universe) {
  return universe <= (uint64_t{1} << 32) ? sizeof(uint32_t) : sizeof(uint64_t);
}

void encodeCoo(const uint64_t* positions, const unsigned char* values, size_t nnz,
               uint64_t universe, size_t valueBytes, unsigned char* out) {
  const size_t width = cooPositionBytes(universe);
  for (size_t i = 0; i < nnz; ++i) {
    if (width == sizeof(uint32_t)) {
      const auto narrow = static_cast<uint32_t>(positions[i]);
      std::memcpy(out + i * width, &narrow, width);
    } else {
      std::memcpy(out + i * width, &positions[i], width);
    }
  }
  if (nnz > 0) std::memcpy(out + nnz * width, values, nnz * valueBytes);  // values may be null
}

spcclResult_t decodeCoo(const MessageBody& body, std::vector<uint64_t>* positions,
                        std::vector<unsigned char>* values) {
  const size_t width = cooPositionBytes(body.universe);
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(body.nnz) * (width + body.valueBytes);
  if (expected != body.bytes) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Coo message: body of %zu bytes, expected %llu for nnz %llu",
                      body.bytes, static_cast<unsigned long long>(expected),
                      static_cast<unsigned long long>(body.nnz));
  }
  const size_t nnz = static_cast<size_t>(body.nnz);
  positions->resize(nnz);
  for (size_t i = 0; i < nnz; ++i) {
    uint64_t position = 0;
    std::memcpy(&position, body.data + i * width, width);  // little-endian: low bytes first
    if (position >= body.universe || (i > 0 && position <= (*positions)[i - 1])) {
      return SPCCL_FAIL(spcclRemoteError,
                        "sparse Coo message: position %llu at entry %zu is out of range or "
                        "not ascending (universe %llu)",
                        static_cast<unsigned long long>(position), i,
                        static_cast<unsigned long long>(body.universe));
    }
    (*positions)[i] = position;
  }
  values->assign(body.data + nnz * width, body.data + body.bytes);
  return spcclSuccess;
}

}  // namespace spccl::sparse

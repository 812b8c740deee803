// Dense (encoding.h): every one of the U values, so a message that is
// denser than the sparse forms' break-even never costs more than a dense
// one.
#include <cstring>

#include "base/check.h"
#include "sparse/encoding_codecs.h"
#include "sparse/value_copy.h"

namespace spccl::sparse {
namespace {

bool allZeroBytes(const unsigned char* value, size_t valueBytes) {
  unsigned char any = 0;
  for (size_t b = 0; b < valueBytes; ++b) any |= value[b];
  return any == 0;
}

}  // namespace

void encodeDense(const uint64_t* positions, const unsigned char* values, size_t nnz,
                 uint64_t universe, size_t valueBytes, unsigned char* out) {
  std::memset(out, 0, static_cast<size_t>(universe) * valueBytes);
  for (size_t i = 0; i < nnz; ++i) {
    copyValue(out + positions[i] * valueBytes, values + i * valueBytes, valueBytes);
  }
}

spcclResult_t decodeDense(const MessageBody& body, std::vector<uint64_t>* positions,
                          std::vector<unsigned char>* values) {
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(body.universe) * body.valueBytes;
  if (expected != body.bytes) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Dense message: body of %zu bytes, expected %llu for universe %llu",
                      body.bytes, static_cast<unsigned long long>(expected),
                      static_cast<unsigned long long>(body.universe));
  }
  positions->clear();
  values->clear();
  for (size_t p = 0; p < static_cast<size_t>(body.universe); ++p) {
    const unsigned char* value = body.data + p * body.valueBytes;
    if (allZeroBytes(value, body.valueBytes)) continue;
    positions->push_back(p);
    values->insert(values->end(), value, value + body.valueBytes);
  }
  if (positions->size() > body.nnz) {
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse Dense message: %zu non-zero values but nnz %llu in its header",
                      positions->size(), static_cast<unsigned long long>(body.nnz));
  }
  return spcclSuccess;
}

}  // namespace spccl::sparse

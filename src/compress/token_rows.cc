#include "compress/token_rows.h"

#include <cstring>

namespace spccl::compress {

std::vector<size_t> keptTokens(const unsigned char* mask, size_t tokens) {
  std::vector<size_t> rows;
  for (size_t t = 0; t < tokens; ++t)
    if (mask[t] != 0) rows.push_back(t);
  return rows;
}

void gatherRows(const void* tensor, std::span<const size_t> rows, size_t rowBytes, void* packed) {
  const auto* from = static_cast<const unsigned char*>(tensor);
  auto* to = static_cast<unsigned char*>(packed);
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(to + i * rowBytes, from + rows[i] * rowBytes, rowBytes);
}

void scatterRows(const void* packed, std::span<const size_t> rows, size_t rowBytes, void* tensor) {
  const auto* from = static_cast<const unsigned char*>(packed);
  auto* to = static_cast<unsigned char*>(tensor);
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(to + rows[i] * rowBytes, from + i * rowBytes, rowBytes);
}

void applyPrunePolicy(spcclPrunePolicy_t policy, const unsigned char* mask, size_t tokens,
                      size_t rowBytes, void* tensor) {
  if (policy != spcclPruneZero) return;
  auto* rows = static_cast<unsigned char*>(tensor);
  for (size_t t = 0; t < tokens; ++t)
    if (mask[t] == 0) std::memset(rows + t * rowBytes, 0, rowBytes);
}

}  // namespace spccl::compress

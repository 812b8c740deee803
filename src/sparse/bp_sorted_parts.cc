// densifySortedParts (bp_sorted_parts.h).
#include "sparse/bp_sorted_parts.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sparse/value_copy.h"

namespace spccl::sparse::bp {
namespace {

// Elements per block: 16 KiB of f32, half a typical L1, for up to 8
// parts; more parts (BP in pieces, bp_pipeline.cc: pieces x ranks) get
// proportionally larger blocks (up to 256 KiB of f32, within L2), so each
// part still brings a run of pairs to each block rather than a handful
// (32 parts on 4096-element blocks spent 2.3x the time of 8 in this loop,
// n = 8, 1 %, 16 M elements).
constexpr size_t kBlock = 4096;
constexpr size_t kPartsPerBlock = 8;
constexpr size_t kMaxBlock = 16 * kBlock;

template <size_t B>
void densifyBlocks(std::span<const SparseSet* const> parts, unsigned char* dense, size_t count) {
  std::vector<size_t> cursor(parts.size(), 0);
  const size_t block =
      std::min(kMaxBlock, kBlock * std::max<size_t>(1, parts.size() / kPartsPerBlock));
  for (size_t base = 0; base < count; base += block) {
    const size_t end = std::min(count, base + block);
    std::memset(dense + base * B, 0, (end - base) * B);
    for (size_t p = 0; p < parts.size(); ++p) {
      const SparseSet& part = *parts[p];
      const uint64_t* positions = part.positions.data();
      const unsigned char* values = part.values.data();
      size_t i = cursor[p];
      const size_t size = part.size();
      for (; i < size && positions[i] < end; ++i)
        std::memcpy(dense + positions[i] * B, values + i * B, B);
      cursor[p] = i;
    }
  }
}

}  // namespace

void densifySortedParts(size_t valueBytes, std::span<const SparseSet* const> parts, void* dense,
                        size_t count) {
  auto* out = static_cast<unsigned char*>(dense);
  switch (valueBytes) {
    case 1:
      return densifyBlocks<1>(parts, out, count);
    case 2:
      return densifyBlocks<2>(parts, out, count);
    case 4:
      return densifyBlocks<4>(parts, out, count);
    case 8:
      return densifyBlocks<8>(parts, out, count);
    default:
      break;
  }
  if (count == 0) return;  // out may be NULL then (memset's argument must not be)
  std::memset(out, 0, count * valueBytes);
  for (const SparseSet* part : parts)
    for (size_t i = 0; i < part->size(); ++i)
      copyValue(out + part->positions[i] * valueBytes, &part->values[i * valueBytes], valueBytes);
}

}  // namespace spccl::sparse::bp

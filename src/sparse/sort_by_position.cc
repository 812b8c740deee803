// sortByPosition (sparse_messages.h): an LSD radix sort of (position,
// value) pairs, 11 bits per pass, as many passes as the largest position
// needs (two for a partition of up to 4 M positions). It replaced an
// indirect comparison sort that was 8 % of a Balanced Parallelism call
// (the keyed permutation leaves each bucket in random position order).
// When the positions are dense in their range (Balanced Parallelism's
// joined result at high density: the radix sort was a fifth of a BP call
// at 10 %), each pair goes straight to its rank instead (rankByBitmap).
#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <vector>

#include "sparse/sparse_messages.h"

namespace spccl::sparse {
namespace {

constexpr unsigned kDigitBits = 11;
constexpr size_t kBuckets = size_t{1} << kDigitBits;
constexpr size_t kSmall = 256;  // below this a comparison sort is cheaper

template <size_t B>
void radixSort(uint64_t* positions, unsigned char* values, size_t nnz, uint64_t largest) {
  const unsigned bits = static_cast<unsigned>(std::bit_width(largest));
  std::vector<uint64_t> otherPositions(nnz);
  std::vector<unsigned char> otherValues(nnz * B);
  uint64_t* fromP = positions;
  unsigned char* fromV = values;
  uint64_t* toP = otherPositions.data();
  unsigned char* toV = otherValues.data();
  std::vector<size_t> start(kBuckets);
  for (unsigned shift = 0; shift < bits; shift += kDigitBits) {
    std::fill(start.begin(), start.end(), 0);
    for (size_t i = 0; i < nnz; ++i) ++start[(fromP[i] >> shift) & (kBuckets - 1)];
    std::exclusive_scan(start.begin(), start.end(), start.begin(), size_t{0});
    for (size_t i = 0; i < nnz; ++i) {  // stable: equal digits keep their order
      const size_t to = start[(fromP[i] >> shift) & (kBuckets - 1)]++;
      toP[to] = fromP[i];
      std::memcpy(toV + to * B, fromV + i * B, B);
    }
    std::swap(fromP, toP);
    std::swap(fromV, toV);
  }
  if (fromP != positions) {  // an odd number of passes: the result is in the scratch
    std::memcpy(positions, fromP, nnz * sizeof(uint64_t));
    std::memcpy(values, fromV, nnz * B);
  }
}

// Positions unique (the sets' invariant) and dense in [0, largest]: a
// pair's rank is the number of smaller positions, read from a bitmap of
// the positions and running popcounts of its words. Two passes over the
// pairs and one over largest / 64 words, against two per radix digit.
template <size_t B>
void rankByBitmap(uint64_t* positions, unsigned char* values, size_t nnz, uint64_t largest) {
  const size_t words = static_cast<size_t>(largest / 64) + 1;
  std::vector<uint64_t> bits(words, 0);
  for (size_t i = 0; i < nnz; ++i) bits[positions[i] / 64] |= uint64_t{1} << (positions[i] % 64);
  std::vector<uint64_t> setBefore(words);  // set bits in the words before
  uint64_t running = 0;
  for (size_t w = 0; w < words; ++w) {
    setBefore[w] = running;
    running += static_cast<uint64_t>(std::popcount(bits[w]));
  }
  std::vector<unsigned char> sortedValues(nnz * B);
  for (size_t i = 0; i < nnz; ++i) {
    const uint64_t p = positions[i];
    const uint64_t lower = (uint64_t{1} << (p % 64)) - 1;
    const size_t rank =
        setBefore[p / 64] + static_cast<size_t>(std::popcount(bits[p / 64] & lower));
    std::memcpy(&sortedValues[rank * B], values + i * B, B);
  }
  // The positions in order are the bitmap's set bits.
  size_t at = 0;
  for (size_t w = 0; w < words; ++w)
    for (uint64_t word = bits[w]; word != 0; word &= word - 1)
      positions[at++] = w * 64 + static_cast<uint64_t>(std::countr_zero(word));
  std::memcpy(values, sortedValues.data(), nnz * B);
}

template <size_t B>
void sortPairs(uint64_t* positions, unsigned char* values, size_t nnz) {
  const uint64_t largest = *std::max_element(positions, positions + nnz);
  if (largest / 64 < nnz)
    rankByBitmap<B>(positions, values, nnz, largest);
  else
    radixSort<B>(positions, values, nnz, largest);
}

void comparisonSort(uint64_t* positions, unsigned char* values, size_t nnz, size_t valueBytes) {
  std::vector<size_t> order(nnz);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [positions](size_t a, size_t b) { return positions[a] < positions[b]; });
  std::vector<uint64_t> sortedPositions(nnz);
  std::vector<unsigned char> sortedValues(nnz * valueBytes);
  for (size_t i = 0; i < nnz; ++i) {
    sortedPositions[i] = positions[order[i]];
    std::memcpy(&sortedValues[i * valueBytes], values + order[i] * valueBytes, valueBytes);
  }
  std::memcpy(positions, sortedPositions.data(), nnz * sizeof(uint64_t));
  if (nnz > 0) std::memcpy(values, sortedValues.data(), nnz * valueBytes);
}

}  // namespace

void sortByPosition(uint64_t* positions, unsigned char* values, size_t nnz, size_t valueBytes) {
  if (std::is_sorted(positions, positions + nnz)) return;
  if (nnz < kSmall) return comparisonSort(positions, values, nnz, valueBytes);
  switch (valueBytes) {
    case 1:
      return sortPairs<1>(positions, values, nnz);
    case 2:
      return sortPairs<2>(positions, values, nnz);
    case 4:
      return sortPairs<4>(positions, values, nnz);
    case 8:
      return sortPairs<8>(positions, values, nnz);
    default:
      return comparisonSort(positions, values, nnz, valueBytes);
  }
}

}  // namespace spccl::sparse

#include "sparse/bp_piece_split.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace spccl::sparse::bp {
namespace {

template <size_t B>
void scatterPairs(const uint64_t* positions, const unsigned char* values, size_t count,
                  const EvenRanges& range, const int* piece, size_t* next, uint64_t* toPositions,
                  unsigned char* toValues, size_t valueBytes) {
  for (size_t i = 0; i < count; ++i) {
    const size_t to = next[piece[i]]++;
    toPositions[to] = positions[i] - range.start(piece[i]);
    if constexpr (B != 0) {
      std::memcpy(toValues + to * B, values + i * B, B);
    } else {
      std::memcpy(toValues + to * valueBytes, values + i * valueBytes, valueBytes);
    }
  }
}

}  // namespace

void splitPieces(std::span<const EvenRanges> ranges, size_t valueBytes, Buckets* buckets,
                 std::vector<uint64_t>* scratchPositions, std::vector<unsigned char>* scratchValues,
                 PieceCuts* cuts) {
  const int parts = static_cast<int>(ranges.size()), pieces = cuts->pieces;
  const size_t total = buckets->offsets[static_cast<size_t>(parts)];
  scratchPositions->resize(buckets->positions.size());
  scratchValues->resize(buckets->values.size());
  cuts->starts.assign(static_cast<size_t>(parts) * static_cast<size_t>(pieces) + 1, total);
  std::vector<int> piece;  // each pair's, for one bucket
  std::vector<size_t> next(static_cast<size_t>(pieces));
  for (int p = 0; p < parts; ++p) {
    const size_t begin = buckets->offsets[p], count = buckets->offsets[p + 1] - begin;
    const uint64_t* positions = buckets->positions.data() + begin;
    piece.resize(count);
    std::fill(next.begin(), next.end(), 0);
    for (size_t i = 0; i < count; ++i) ++next[piece[i] = ranges[p].partOf(positions[i])];
    size_t at = begin;
    for (int k = 0; k < pieces; ++k) {
      cuts->starts[static_cast<size_t>(p) * static_cast<size_t>(pieces) + static_cast<size_t>(k)] =
          at;
      at += std::exchange(next[k], at);
    }
    const unsigned char* values = buckets->values.data() + begin * valueBytes;
    uint64_t* toPositions = scratchPositions->data();
    unsigned char* toValues = scratchValues->data();
    switch (valueBytes) {
      case 2:
        scatterPairs<2>(positions, values, count, ranges[p], piece.data(), next.data(), toPositions,
                        toValues, valueBytes);
        break;
      case 4:
        scatterPairs<4>(positions, values, count, ranges[p], piece.data(), next.data(), toPositions,
                        toValues, valueBytes);
        break;
      case 8:
        scatterPairs<8>(positions, values, count, ranges[p], piece.data(), next.data(), toPositions,
                        toValues, valueBytes);
        break;
      default:
        scatterPairs<0>(positions, values, count, ranges[p], piece.data(), next.data(), toPositions,
                        toValues, valueBytes);
    }
  }
  std::swap(buckets->positions, *scratchPositions);
  std::swap(buckets->values, *scratchValues);
}

}  // namespace spccl::sparse::bp

// Ascending positions for the Packed codec tests (test_gpu_packed,
// logic_varint): gaps of every varint length, 1 to 10 bytes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace spccl::gpu_test {

// count strictly ascending positions below universe, their gaps drawn
// with a random number of significant bits (0 .. maxGapBits).
inline std::vector<uint64_t> ascendingPositions(uint64_t universe, size_t count, int maxGapBits,
                                                std::mt19937_64& rng) {
  std::vector<uint64_t> positions;
  uint64_t next = 0;
  while (positions.size() < count) {
    const int bits = static_cast<int>(rng() % (maxGapBits + 1));
    const uint64_t gap = bits == 0 ? 0 : rng() >> (64 - bits);
    if (next >= universe || gap >= universe - next) break;
    positions.push_back(next + gap);
    next += gap + 1;
  }
  return positions;
}

// Varint bytes over a universe of 1000: one well-formed body and the
// malformed ones the CPU decoder rejects (logic_varint checks that it does).
struct PackedCase {
  const char* what;
  std::vector<unsigned char> bytes;
  size_t nnz;
  bool wellFormed;
};
constexpr uint64_t kPackedCaseUniverse = 1000;

inline std::vector<PackedCase> packedCases() {
  const std::vector<unsigned char> good = {5, 0x81, 0x01, 0};  // positions 5, 135, 136
  return {
      {"well formed", good, 3, true},
      {"cut varint", {5, 0x81}, 2, false},
      {"a varint too many", good, 2, false},
      {"a varint too few", good, 4, false},
      {"beyond the universe", {0xe8, 0x07}, 1, false},  // gap 1000
      {"over 64 bits", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 1, false},
      {"eleven bytes", {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0}, 1, false},
      {"sum beyond the universe", {0xf3, 0x03, 0xf4, 0x03}, 2, false},  // 499, then 1000
  };
}

}  // namespace spccl::gpu_test

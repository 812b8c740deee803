// mergeReceivedSet and mergeReceivedSetIntoDense (sparse/received_merge.h),
// which merge a Packed message straight from its bytes
// (kernels::mergeSumGapCoded), against the plain path they replace:
// decodeSet, then mergeSets / kernels::mergeSumIntoDense (tested against a
// two-finger reference in test_sparse_kernels.cc). Results must be bitwise
// the same for every type, either operand order, empty sets, one side
// empty, all positions shared, gaps of one, two and more varint bytes, and
// the universe's last position; every message decodeSet rejects
// (truncated, corrupted, stray bytes, positions past the universe, a
// varint over 64 bits) must fail with decodeSet's code and text.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/encoding.h"
#include "sparse/received_merge.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {
namespace {

constexpr unsigned kPackedOnly = 1u << static_cast<unsigned>(Encoding::Packed);
constexpr int kPeer = 5;

// Positions below universe at about `density`, with a long gap now and then
// (three-byte varints and more) when the universe allows.
SparseSet randomSet(uint64_t universe, double density, size_t valueBytes, std::mt19937_64& rng) {
  SparseSet set;
  for (uint64_t p = 0; p < universe; ++p) {
    if (static_cast<double>(rng() % 100000) < density * 100000) set.positions.push_back(p);
    if (universe > 100000 && rng() % 64 == 0) p += 20000 + rng() % 50000;
  }
  set.values.resize(set.positions.size() * valueBytes);
  for (unsigned char& byte : set.values) byte = static_cast<unsigned char>(rng());
  return set;
}

std::vector<unsigned char> encodedAs(Encoding encoding, const SparseSet& set, uint64_t universe,
                                     size_t valueBytes) {
  std::vector<unsigned char> out;
  encode(encoding, set.positions.data(), set.values.data(), set.size(), universe, valueBytes, &out);
  return out;
}

struct Outcome {
  spcclResult_t result = spcclSuccess;
  std::string error;
  SparseSet pairs;
  std::vector<unsigned char> dense;
  size_t nonZeros = 0;
};

ReceivedMessage received(const std::vector<unsigned char>& bytes, size_t size, uint64_t universe,
                         unsigned allowed) {
  return {bytes.data(), size, bytes.empty() ? uint8_t{0} : bytes[0], universe, allowed, kPeer};
}

// The plain path: decodeSet, then the merge of two arrays.
Outcome viaDecode(spcclDataType_t type, const SparseSet& mine, const ReceivedMessage& m,
                  bool theirsLower, bool intoDense) {
  QuietFailures quiet;
  const size_t valueBytes = spcclTypeSize(type);
  Outcome o;
  SparseSet theirs;
  o.result =
      decodeSet(m.data, m.bytes, m.flags, m.universe, valueBytes, m.allowed, m.peer, &theirs);
  if (o.result != spcclSuccess) {
    o.error = threadLastError();
    return o;
  }
  const kernels::SortedPairs a = pairsOf(mine), b = pairsOf(theirs);
  if (intoDense) {
    o.dense.assign(static_cast<size_t>(m.universe) * valueBytes, 0xcd);
    o.nonZeros = kernels::mergeSumIntoDense(type, theirsLower ? b : a, theirsLower ? a : b,
                                            o.dense.data(), static_cast<size_t>(m.universe));
  } else {
    mergeSets(type, valueBytes, theirsLower ? b : a, theirsLower ? a : b, &o.pairs);
  }
  return o;
}

Outcome viaMessage(spcclDataType_t type, const SparseSet& mine, const ReceivedMessage& m,
                   bool theirsLower, bool intoDense) {
  QuietFailures quiet;
  const size_t valueBytes = spcclTypeSize(type);
  Outcome o;
  SparseSet scratch;
  if (intoDense) {
    o.dense.assign(static_cast<size_t>(m.universe) * valueBytes, 0xcd);
    o.result = mergeReceivedSetIntoDense(type, pairsOf(mine), m, theirsLower, &scratch,
                                         o.dense.data(), &o.nonZeros);
  } else {
    o.result = mergeReceivedSet(type, pairsOf(mine), m, theirsLower, &scratch, &o.pairs);
  }
  if (o.result != spcclSuccess) o.error = threadLastError();
  return o;
}

// Both paths agree: same code and text on failure, same bits on success.
void expectSame(spcclDataType_t type, const SparseSet& mine, const ReceivedMessage& m,
                const std::string& what) {
  for (bool theirsLower : {false, true}) {
    for (bool intoDense : {false, true}) {
      const Outcome want = viaDecode(type, mine, m, theirsLower, intoDense);
      const Outcome got = viaMessage(type, mine, m, theirsLower, intoDense);
      const std::string where = what + (theirsLower ? ", theirs lower" : ", theirs higher") +
                                (intoDense ? ", into dense" : ", as pairs");
      ASSERT_EQ(got.result, want.result) << where << ": " << got.error;
      EXPECT_EQ(got.error, want.error) << where;
      if (want.result != spcclSuccess) continue;
      EXPECT_EQ(got.pairs.positions, want.pairs.positions) << where;
      EXPECT_EQ(got.pairs.values, want.pairs.values) << where;
      EXPECT_EQ(got.dense, want.dense) << where;
      EXPECT_EQ(got.nonZeros, want.nonZeros) << where;
    }
  }
}

TEST(SparseReceivedMerge, SameBitsAsDecodeThenMergeForEveryTypeAndEncoding) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < spcclNumTypes; ++t) {
    const auto type = static_cast<spcclDataType_t>(t);
    const size_t valueBytes = spcclTypeSize(type);
    for (uint64_t universe : {uint64_t{1}, uint64_t{3000}, uint64_t{400000}}) {
      for (double mineDensity : {0.0, 0.01, 0.5, 1.0}) {
        for (double theirDensity : {0.0, 0.01, 0.5, 1.0}) {
          if (universe > 3000 && (mineDensity > 0.1 || theirDensity > 0.1)) continue;
          const SparseSet mine = randomSet(universe, mineDensity, valueBytes, rng);
          SparseSet theirs = randomSet(universe, theirDensity, valueBytes, rng);
          if (universe > 1 && rng() % 2 == 0 &&
              (theirs.positions.empty() || theirs.positions.back() != universe - 1)) {
            theirs.positions.push_back(universe - 1);  // the last position
            theirs.values.resize(theirs.values.size() + valueBytes, 0x5a);
          }
          for (Encoding encoding :
               {Encoding::Packed, Encoding::Coo, Encoding::Bitmap, Encoding::Dense}) {
            const auto bytes = encodedAs(encoding, theirs, universe, valueBytes);
            expectSame(type, mine, received(bytes, bytes.size(), universe, kAllEncodings),
                       "type " + std::to_string(t) + ", universe " + std::to_string(universe) +
                           ", densities " + std::to_string(mineDensity) + "/" +
                           std::to_string(theirDensity) + ", " + encodingName(encoding));
          }
        }
      }
    }
  }
}

TEST(SparseReceivedMerge, TruncatedAndCorruptedMessagesFailAsDecodeSetFails) {
  std::mt19937_64 rng(12);
  const uint64_t universe = 200000;
  const SparseSet mine = randomSet(universe, 0.002, 4, rng);
  const SparseSet theirs = randomSet(universe, 0.002, 4, rng);
  const auto bytes = encodedAs(Encoding::Packed, theirs, universe, 4);
  for (size_t size = 0; size < bytes.size(); size += 1 + size / 16)
    expectSame(spcclFloat32, mine, received(bytes, size, universe, kPackedOnly),
               "first " + std::to_string(size) + " bytes");
  for (int trial = 0; trial < 400; ++trial) {
    auto corrupted = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the header and varints, which the merge reads itself.
      const size_t varintEnd = bytes.size() - theirs.size() * 4;
      const size_t at = rng() % 4 == 0 ? rng() % bytes.size() : rng() % varintEnd;
      corrupted[at] ^= static_cast<unsigned char>(1u << (rng() % 8));
    }
    expectSame(spcclFloat32, mine, received(corrupted, corrupted.size(), universe, kPackedOnly),
               "trial " + std::to_string(trial));
  }
}

// Writes a Packed message of `varints` then nnz values of one byte each.
std::vector<unsigned char> packedMessage(uint64_t nnz, uint64_t universe,
                                         const std::vector<unsigned char>& varints) {
  std::vector<unsigned char> bytes(17);
  bytes[0] = static_cast<unsigned char>(Encoding::Packed);
  std::memcpy(&bytes[1], &nnz, 8);
  std::memcpy(&bytes[9], &universe, 8);
  bytes.insert(bytes.end(), varints.begin(), varints.end());
  for (uint64_t i = 0; i < nnz; ++i) bytes.push_back(static_cast<unsigned char>(0x11 + i));
  return bytes;
}

TEST(SparseReceivedMerge, CraftedBadVarintsFailAsDecodeSetFails) {
  SparseSet mine;
  mine.positions = {0, 5, 9};
  mine.values = {1, 2, 3};
  const uint64_t small = 12, huge = uint64_t{1} << 63;
  struct Case {
    const char* what;
    uint64_t nnz, universe;
    std::vector<unsigned char> varints;
  };
  const std::vector<Case> cases = {
      {"valid: gaps of one byte and two", 3, small, {0x01, 0x02, 0x03}},
      {"valid: up to the last position", 2, small, {0x00, 0x0a}},
      {"past the universe", 2, small, {0x05, 0x06}},
      {"past the universe by a two-byte gap", 2, 300, {0x05, 0x80, 0x03}},
      {"stray byte before the values", 2, small, {0x01, 0x02, 0x00}},
      {"two stray bytes: a whole two-byte varint", 2, small, {0x01, 0x02, 0x81, 0x00}},
      {"varint runs into the values", 2, small, {0x01, 0x82}},
      {"nnz too large for the body", 9, small, {0x01}},
      {"varint over 64 bits",
       1,
       huge,
       {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}},
      {"ten-byte varint within 64 bits, past the universe",
       1,
       huge,
       {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
      {"a 63-bit first position, then one past the universe",
       2,
       huge,
       {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00}},
  };
  for (const Case& c : cases) {
    const auto bytes = packedMessage(c.nnz, c.universe, c.varints);
    const ReceivedMessage m = received(bytes, bytes.size(), c.universe, kPackedOnly);
    if (c.universe > 1000) {  // no dense tensor that large: pairs only
      for (bool theirsLower : {false, true}) {
        const Outcome want = viaDecode(spcclUint8, mine, m, theirsLower, false);
        const Outcome got = viaMessage(spcclUint8, mine, m, theirsLower, false);
        EXPECT_EQ(got.result, want.result) << c.what;
        EXPECT_EQ(got.error, want.error) << c.what;
        if (want.result == spcclSuccess) {
          EXPECT_EQ(got.pairs.positions, want.pairs.positions) << c.what;
          EXPECT_EQ(got.pairs.values, want.pairs.values) << c.what;
        }
      }
      continue;
    }
    expectSame(spcclUint8, mine, m, c.what);
  }
  // A frame naming an encoding the call does not allow.
  const auto bytes = packedMessage(1, small, {0x01});
  expectSame(spcclUint8, mine, received(bytes, bytes.size(), small, 1u << 2), "flags not allowed");
}

}  // namespace
}  // namespace spccl::sparse

// The wire encodings (src/sparse/encoding.h): round trips for each encoding
// over small and odd universes, nnz 0 / 1 / all / random and every value
// width; exact sizes and the choice of the smallest; decode rejects
// truncated, oversized, corrupted or foreign-universe messages without
// reading out of bounds (run under ASan to check the last part).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/check.h"
#include "sparse/encoding.h"

namespace spccl::sparse {
namespace {

constexpr Encoding kAllEncodingList[] = {Encoding::Coo, Encoding::Bitmap, Encoding::Packed,
                                         Encoding::Dense};
constexpr size_t kHeader = 17;  // encoding u8, nnz u64, universe u64

struct Message {
  std::vector<uint64_t> positions;
  std::vector<unsigned char> values;  // never all-zero bytes, so Dense keeps every entry
};

Message randomMessage(uint64_t universe, size_t nnz, size_t valueBytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Message m;
  if (nnz == universe) {
    for (uint64_t p = 0; p < universe; ++p) m.positions.push_back(p);
  } else {
    std::vector<bool> taken(universe, false);
    while (m.positions.size() < nnz) {
      const uint64_t p = rng() % universe;
      if (!taken[p]) {
        taken[p] = true;
        m.positions.push_back(p);
      }
    }
    std::sort(m.positions.begin(), m.positions.end());
  }
  for (size_t i = 0; i < nnz * valueBytes; ++i) {
    m.values.push_back(static_cast<unsigned char>(rng()) | (i % valueBytes == 0 ? 1 : 0));
  }
  return m;
}

std::vector<unsigned char> encoded(Encoding encoding, const Message& m, uint64_t universe,
                                   size_t valueBytes) {
  std::vector<unsigned char> out = {0xab};  // encode appends: keep a byte in front
  const size_t bytes = encode(encoding, m.positions.data(), m.values.data(), m.positions.size(),
                              universe, valueBytes, &out);
  EXPECT_EQ(bytes + 1, out.size());
  EXPECT_EQ(out[0], 0xab);
  return std::vector<unsigned char>(out.begin() + 1, out.end());
}

spcclResult_t decodeInto(const std::vector<unsigned char>& bytes, uint64_t universe,
                         size_t valueBytes, Message* m) {
  QuietFailures quiet;  // rejections are expected here; keep the test log short
  return decode(bytes.data(), bytes.size(), universe, valueBytes, &m->positions, &m->values);
}

TEST(SparseEncoding, RoundTripEveryEncoding) {
  for (Encoding encoding : kAllEncodingList) {
    for (uint64_t universe : {1ull, 7ull, 8ull, 64ull, 65ull, 1000ull}) {
      for (size_t valueBytes : {1, 2, 4, 8}) {
        const size_t counts[] = {0, 1, static_cast<size_t>(universe),
                                 static_cast<size_t>(universe / 3)};
        for (size_t nnz : counts) {
          SCOPED_TRACE(testing::Message() << encodingName(encoding) << " U " << universe << " vb "
                                          << valueBytes << " nnz " << nnz);
          const Message m = randomMessage(universe, nnz, valueBytes, universe * 131 + nnz);
          const auto bytes = encoded(encoding, m, universe, valueBytes);
          EXPECT_EQ(bytes.size(),
                    encodedBytes(encoding, nnz, universe, valueBytes, m.positions.data()));
          EXPECT_EQ(bytes[0], static_cast<unsigned char>(encoding));
          Message back;
          ASSERT_EQ(decodeInto(bytes, universe, valueBytes, &back), spcclSuccess)
              << threadLastError();
          EXPECT_EQ(back.positions, m.positions);
          EXPECT_EQ(back.values, m.values);
        }
      }
    }
  }
}

TEST(SparseEncoding, BitmapAndDenseAcceptAnyPositionOrder) {
  const std::vector<uint64_t> positions = {9, 2, 5};
  const std::vector<uint16_t> values = {90, 20, 50};
  for (Encoding encoding : {Encoding::Bitmap, Encoding::Dense}) {
    std::vector<unsigned char> out;
    encode(encoding, positions.data(), values.data(), 3, 10, 2, &out);
    Message back;
    ASSERT_EQ(decodeInto(out, 10, 2, &back), spcclSuccess);
    EXPECT_EQ(back.positions, (std::vector<uint64_t>{2, 5, 9}));
    std::vector<uint16_t> decodedValues(3);
    std::memcpy(decodedValues.data(), back.values.data(), 6);
    EXPECT_EQ(decodedValues, (std::vector<uint16_t>{20, 50, 90}));
  }
}

TEST(SparseEncoding, DenseDropsValuesWhoseBytesAreZero) {
  const std::vector<uint64_t> positions = {1, 3};
  const std::vector<float> values = {0.0f, -0.0f};  // +0 adds nothing; -0 has a set bit
  std::vector<unsigned char> out;
  encode(Encoding::Dense, positions.data(), values.data(), 2, 5, 4, &out);
  Message back;
  ASSERT_EQ(decodeInto(out, 5, 4, &back), spcclSuccess);
  EXPECT_EQ(back.positions, (std::vector<uint64_t>{3}));
}

TEST(SparseEncoding, CooWidthFollowsTheUniverse) {
  const uint64_t fits = uint64_t{1} << 32, beyond = (uint64_t{1} << 32) + 5;
  EXPECT_EQ(encodedBytes(Encoding::Coo, 10, fits, 4), kHeader + 10 * (4 + 4));
  EXPECT_EQ(encodedBytes(Encoding::Coo, 10, beyond, 4), kHeader + 10 * (8 + 4));
  EXPECT_EQ(encodedBytes(Encoding::Bitmap, 10, beyond, 4), kHeader + (beyond + 7) / 8 + 40);
  EXPECT_EQ(encodedBytes(Encoding::Dense, 10, beyond, 2), kHeader + beyond * 2);
  // Coo and Packed never allocate the universe: a real round trip at the top.
  Message m;
  m.positions = {0, fits - 1, fits, beyond - 1};
  m.values = {1, 2, 3, 4};
  for (Encoding encoding : {Encoding::Coo, Encoding::Packed}) {
    const auto bytes = encoded(encoding, m, beyond, 1);
    Message back;
    ASSERT_EQ(decodeInto(bytes, beyond, 1, &back), spcclSuccess) << threadLastError();
    EXPECT_EQ(back.positions, m.positions);
    EXPECT_EQ(back.values, m.values);
  }
  // Packed: one byte per gap below 128.
  Message run;
  run.positions = {0, 1, 2, 131};  // gaps 0, 0, 0, 128
  run.values = {1, 1, 1, 1};
  EXPECT_EQ(encodedBytes(Encoding::Packed, 4, 1000, 1, run.positions.data()),
            kHeader + (1 + 1 + 1 + 2) + 4);
}

TEST(SparseEncoding, CheapestIsTheSmallestActualEncoding) {
  std::mt19937_64 rng(5);
  for (uint64_t universe : {1ull, 7ull, 100ull, 5000ull}) {
    for (size_t valueBytes : {1, 4, 8}) {
      for (double density : {0.0, 0.001, 0.01, 0.1, 0.3, 0.6, 1.0}) {
        const auto nnz = static_cast<size_t>(density * static_cast<double>(universe));
        const Message m = randomMessage(universe, nnz, valueBytes, rng());
        size_t smallest = SIZE_MAX;
        for (Encoding encoding : kAllEncodingList) {
          smallest = std::min(smallest, encoded(encoding, m, universe, valueBytes).size());
        }
        const Encoding chosen =
            cheapestEncoding(nnz, universe, valueBytes, m.positions.data(), kAllEncodings);
        const size_t chosenBytes = encoded(chosen, m, universe, valueBytes).size();
        EXPECT_EQ(chosenBytes, smallest) << "U " << universe << " nnz " << nnz;
        EXPECT_LE(chosenBytes, encodedBytes(Encoding::Dense, nnz, universe, valueBytes));
      }
    }
  }
  // Respects the mask; with nothing allowed falls back to Dense.
  EXPECT_EQ(cheapestEncoding(1000, 1000, 4, nullptr, 1u << static_cast<int>(Encoding::Coo)),
            Encoding::Coo);
  EXPECT_EQ(cheapestEncoding(1, 1000, 4, nullptr, 0), Encoding::Dense);
  // The regimes docs/algorithms.md 2.6 (2) expects: very sparse -> a position list (varints
  // of at most 3 bytes beat u32s here), middling -> bitmap, full -> dense.
  const unsigned noPacked = kAllEncodings & ~(1u << static_cast<int>(Encoding::Packed));
  EXPECT_EQ(cheapestEncoding(1, 1 << 20, 4, nullptr, kAllEncodings), Encoding::Packed);
  EXPECT_EQ(cheapestEncoding(1, 1 << 20, 4, nullptr, noPacked), Encoding::Coo);
  EXPECT_EQ(cheapestEncoding(1 << 17, 1 << 20, 4, nullptr, noPacked), Encoding::Bitmap);
  EXPECT_EQ(cheapestEncoding(1 << 20, 1 << 20, 4, nullptr, kAllEncodings), Encoding::Dense);
}

// encodeCheapest (and encodeCheapestInto) encodes Packed in one pass and keeps it only if smaller
// than the best other encoding: the same choice and bytes as
// cheapestEncoding (with Packed's exact size) followed by encode, at every
// density around the crossovers and with any subset of encodings allowed.
TEST(SparseEncoding, EncodeCheapestMatchesCheapestThenEncode) {
  std::mt19937_64 rng(9);
  std::vector<unsigned char> reused;
  for (uint64_t universe : {1ull, 100ull, 5000ull, 1ull << 20}) {
    for (size_t valueBytes : {1, 4}) {
      for (double density : {0.0, 0.0005, 0.01, 0.05, 0.1, 0.12, 0.15, 0.3, 1.0}) {
        const auto nnz = static_cast<size_t>(density * static_cast<double>(universe));
        if (nnz > 200000) continue;
        const Message m = randomMessage(universe, nnz, valueBytes, rng());
        for (unsigned allowed = 1; allowed <= kAllEncodings; ++allowed) {
          if ((allowed & kAllEncodings) == 0) continue;
          const Encoding want =
              cheapestEncoding(nnz, universe, valueBytes, m.positions.data(), allowed);
          std::vector<unsigned char> got = {0xcd};
          size_t bytes = 0;
          const Encoding chosen = encodeCheapest(m.positions.data(), m.values.data(), nnz, universe,
                                                 valueBytes, allowed, &got, &bytes);
          EXPECT_EQ(chosen, want) << "U " << universe << " nnz " << nnz << " mask " << allowed;
          EXPECT_EQ(bytes + 1, got.size());
          EXPECT_EQ(std::vector<unsigned char>(got.begin() + 1, got.end()),
                    encoded(want, m, universe, valueBytes))
              << "U " << universe << " nnz " << nnz << " mask " << allowed;
          // Into a reused buffer (left larger by an earlier message, its
          // bytes stale): the same message at its front, the rest untouched.
          reused.resize(std::max(reused.size(), size_t{64}), 0xee);
          const size_t before = reused.size();
          size_t intoBytes = 0;
          EXPECT_EQ(encodeCheapestInto(m.positions.data(), m.values.data(), nnz, universe,
                                       valueBytes, allowed, &reused, &intoBytes),
                    want);
          EXPECT_EQ(intoBytes, bytes);
          EXPECT_GE(reused.size(), std::max(before, intoBytes));
          EXPECT_TRUE(std::equal(got.begin() + 1, got.end(), reused.begin()))
              << "U " << universe << " nnz " << nnz << " mask " << allowed;
        }
      }
    }
  }
}

TEST(SparseEncoding, DecodeRejectsTruncatedAndOversizedMessages) {
  for (Encoding encoding : kAllEncodingList) {
    const Message m = randomMessage(40, 9, 4, 17);
    const auto bytes = encoded(encoding, m, 40, 4);
    for (size_t length = 0; length < bytes.size(); ++length) {
      const std::vector<unsigned char> prefix(bytes.begin(), bytes.begin() + length);
      Message back;
      EXPECT_EQ(decodeInto(prefix, 40, 4, &back), spcclRemoteError)
          << encodingName(encoding) << " truncated to " << length;
    }
    auto longer = bytes;
    longer.push_back(0);
    Message back;
    EXPECT_EQ(decodeInto(longer, 40, 4, &back), spcclRemoteError) << encodingName(encoding);
    EXPECT_EQ(decodeInto(bytes, 41, 4, &back), spcclRemoteError) << "universe mismatch";
    EXPECT_EQ(decodeInto(bytes, 40, 4, &back), spcclSuccess);
  }
}

void setNnz(std::vector<unsigned char>* bytes, uint64_t nnz) { std::memcpy(&(*bytes)[1], &nnz, 8); }

TEST(SparseEncoding, DecodeRejectsCorruptedMessages) {
  const Message m = randomMessage(13, 4, 2, 3);
  Message back;
  auto bad = encoded(Encoding::Coo, m, 13, 2);
  bad[0] = 9;
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "unknown encoding";
  bad = encoded(Encoding::Bitmap, m, 13, 2);
  setNnz(&bad, 1ull << 62);
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "nnz beyond universe";
  setNnz(&bad, 5);
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "nnz disagrees with bitmap";
  bad = encoded(Encoding::Bitmap, m, 13, 2);
  bad[kHeader + 1] |= 0x80;  // bit 15 of a 13-bit map
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "bit beyond universe";
  bad = encoded(Encoding::Coo, m, 13, 2);
  bad[kHeader] = 13;  // first position = U
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "Coo position out of range";
  bad = encoded(Encoding::Coo, m, 13, 2);
  std::memcpy(&bad[kHeader + 4], &bad[kHeader], 4);  // second position = first
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "Coo not ascending";
  bad = encoded(Encoding::Packed, m, 13, 2);
  bad[kHeader] = 0x8d;  // first varint continues into the next one
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "Packed stray varint";
  // Eleven continuation bytes: a varint past 64 bits.
  std::vector<unsigned char> overlong(kHeader + 11 + 2, 0xff);
  overlong[0] = static_cast<unsigned char>(Encoding::Packed);
  const uint64_t universe = ~uint64_t{0};
  setNnz(&overlong, 1);
  std::memcpy(&overlong[9], &universe, 8);
  overlong[kHeader + 11] = 0x01;  // ends the varint
  overlong[kHeader + 12] = 0x42;  // the value
  EXPECT_EQ(decodeInto(overlong, universe, 1, &back), spcclRemoteError) << "varint over 64 bits";
  bad = encoded(Encoding::Dense, m, 13, 2);
  setNnz(&bad, 2);
  EXPECT_EQ(decodeInto(bad, 13, 2, &back), spcclRemoteError) << "Dense holds more than nnz";
}

TEST(SparseEncoding, RandomCorruptionNeverYieldsAnInvalidSet) {
  std::mt19937_64 rng(99);
  for (Encoding encoding : kAllEncodingList) {
    const Message m = randomMessage(300, 60, 4, 21);
    const auto bytes = encoded(encoding, m, 300, 4);
    for (int trial = 0; trial < 500; ++trial) {
      auto corrupted = bytes;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        corrupted[rng() % corrupted.size()] ^= static_cast<unsigned char>(1u << (rng() % 8));
      Message back;
      if (decodeInto(corrupted, 300, 4, &back) != spcclSuccess) continue;
      ASSERT_EQ(back.values.size(), back.positions.size() * 4);
      for (size_t k = 0; k < back.positions.size(); ++k) {
        ASSERT_LT(back.positions[k], 300u);
        if (k > 0) {
          ASSERT_LT(back.positions[k - 1], back.positions[k]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace spccl::sparse

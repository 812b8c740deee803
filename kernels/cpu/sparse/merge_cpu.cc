// mergeSum / mergeSumIntoDense and their gap-coded forms (sparse_kernels.h)
// on the CPU.
//
// A two-finger merge of two random interleavings mispredicts the
// "which side is smaller" branch about once per pair, which cost more than
// everything else the merge does (HC's merges were a third of its
// instructions and more of its time at d = 1 %). Here each step is
// branch-free: both heads are read, their sum is computed whether or not
// the positions match, and the output position, value and both advances
// are selected with masks. The sum is the dense reduce kernel's
// Format::store(SumOp(lower, higher)), so the bits are those of the merge
// this replaces (which gathered the common pairs for one reduce call).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cpu/sparse/position_sources.h"
#include "kernels/sparse_kernels.h"

namespace spccl::kernels {
namespace {

template <typename Storage>
using StorageBits = std::conditional_t<
    sizeof(Storage) == 1, uint8_t,
    std::conditional_t<sizeof(Storage) == 2, uint16_t,
                       std::conditional_t<sizeof(Storage) == 4, uint32_t, uint64_t>>>;

// c ? x : y on the bits, so the compiler cannot turn it into a branch.
template <typename Bits>
inline Bits selectBits(bool c, Bits x, Bits y) {
  const auto mask = static_cast<Bits>(-static_cast<Bits>(c));
  return static_cast<Bits>((x & mask) | (y & static_cast<Bits>(~mask)));
}

// Element i of an array of values read as their bits.
template <typename Bits>
inline Bits loadBits(const unsigned char* from, size_t i) {
  Bits bits;
  std::memcpy(&bits, from + i * sizeof(Bits), sizeof(Bits));
  return bits;
}

// lower + higher as the dense reduce kernel adds them: Format::store(SumOp).
template <typename Format, typename Bits>
inline Bits sumBits(Bits lower, Bits higher) {
  using Storage = typename Format::Storage;
  return std::bit_cast<Bits>(Format::store(SumOp::apply(
      Format::load(std::bit_cast<Storage>(lower)), Format::load(std::bit_cast<Storage>(higher)))));
}

// Calls emit(position, valueBits) for the union of the two lists in
// ascending order, lower + higher where both hold a position. The
// positions come from position_sources.h's sources, the values from
// arrays in position order.
template <typename Format, typename LowerPositions, typename HigherPositions, typename Emit>
void mergeElements(LowerPositions& lp, const void* lowerValues, HigherPositions& hp,
                   const void* higherValues, Emit&& emit) {
  using Storage = typename Format::Storage;
  using Bits = StorageBits<Storage>;
  static_assert(sizeof(Bits) == sizeof(Storage));
  const auto* lv = static_cast<const unsigned char*>(lowerValues);
  const auto* hv = static_cast<const unsigned char*>(higherValues);
  while (lp.more() && hp.more()) {
    const uint64_t pa = lp.head(), pb = hp.head();
    const Bits va = loadBits<Bits>(lv, lp.index()), vb = loadBits<Bits>(hv, hp.index());
    const bool takeA = pa <= pb, takeB = pb <= pa;
    const Bits one = selectBits(takeA, va, vb);
    emit(takeA ? pa : pb, selectBits(takeA && takeB, sumBits<Format>(va, vb), one));
    lp.advance(takeA);
    hp.advance(takeB);
  }
  for (; lp.more(); lp.advance(true)) emit(lp.head(), loadBits<Bits>(lv, lp.index()));
  for (; hp.more(); hp.advance(true)) emit(hp.head(), loadBits<Bits>(hv, hp.index()));
}

template <typename Format, typename LowerPositions, typename HigherPositions>
size_t mergeToPairs(LowerPositions& lp, const void* lowerValues, HigherPositions& hp,
                    const void* higherValues, uint64_t* positions, void* values) {
  using Bits = StorageBits<typename Format::Storage>;
  auto* out = static_cast<unsigned char*>(values);
  size_t k = 0;
  mergeElements<Format>(lp, lowerValues, hp, higherValues, [&](uint64_t at, Bits value) {
    positions[k] = at;
    std::memcpy(out + k * sizeof(Bits), &value, sizeof(Bits));
    ++k;
  });
  return k;
}

// The last merge of a schedule, into a dense tensor: no two-finger merge
// at all. Per block of kDenseBlock elements (in L1): clear it, place the
// lower list's values (noting which slots they took), then add the higher
// list's values where the lower list has one and place them elsewhere. Each
// pair costs a store or a load-add-select-store, with no branch on the
// data (the branch-free two-finger merge cost ~50 instructions per output
// element here; the loops' exits mispredict once per block). The sums are
// the two-finger merge's: Format::store(SumOp(lower, higher)).
constexpr size_t kDenseBlock = 1024;

template <typename Format, typename LowerPositions, typename HigherPositions>
size_t mergeToDense(LowerPositions& lp, const void* lowerValues, HigherPositions& hp,
                    const void* higherValues, void* dense, size_t count) {
  using Storage = typename Format::Storage;
  using Bits = StorageBits<Storage>;
  constexpr size_t B = sizeof(Bits);
  auto* out = static_cast<unsigned char*>(dense);
  const auto* lv = static_cast<const unsigned char*>(lowerValues);
  const auto* hv = static_cast<const unsigned char*>(higherValues);
  auto isNonZero = [](Bits bits) {
    return !ZeroTest<Format>::isZero(std::bit_cast<Storage>(bits));
  };
  uint64_t taken[kDenseBlock / 64];
  size_t nonZeros = 0;
  for (size_t base = 0; base < count; base += kDenseBlock) {
    const size_t end = count - base < kDenseBlock ? count : base + kDenseBlock;
    unsigned char* block = out + base * B;
    std::memset(block, 0, (end - base) * B);
    std::memset(taken, 0, sizeof(taken));
    for (; lp.more() && lp.head() < end; lp.advance(true)) {
      const size_t i = static_cast<size_t>(lp.head() - base);
      const Bits v = loadBits<Bits>(lv, lp.index());
      std::memcpy(block + i * B, &v, B);
      taken[i / 64] |= uint64_t{1} << (i % 64);
      nonZeros += isNonZero(v);
    }
    for (; hp.more() && hp.head() < end; hp.advance(true)) {
      const size_t i = static_cast<size_t>(hp.head() - base);
      const Bits vl = loadBits<Bits>(block, i), vh = loadBits<Bits>(hv, hp.index());
      const bool both = ((taken[i / 64] >> (i % 64)) & 1) != 0;
      const Bits v = selectBits(both, sumBits<Format>(vl, vh), vh);
      std::memcpy(block + i * B, &v, B);
      nonZeros += isNonZero(v);
      nonZeros -= both && isNonZero(vl);
    }
  }
  return nonZeros;
}

// Runs merge(lowerPositions, lowerValues, higherPositions, higherValues)
// with the gap-coded operand on its side, then rejects the result if the
// varints were malformed (or positions remain: they lay past the end).
template <typename Merge>
size_t withGapCodedOperand(const SortedPairs& pairs, const GapCodedPairs& coded, bool codedIsLower,
                           uint64_t universe, Merge&& merge) {
  ArrayPositions array(pairs);
  GapCodedPositions gaps(coded, universe);
  const size_t result = codedIsLower ? merge(gaps, coded.values, array, pairs.values)
                                     : merge(array, pairs.values, gaps, coded.values);
  return gaps.valid() && !array.more() ? result : kMalformedGapCode;
}

}  // namespace

size_t mergeSum(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                uint64_t* positions, void* values) {
  return withFormat(type, size_t{0}, [&](auto format) {
    ArrayPositions lp(lower), hp(higher);
    return mergeToPairs<decltype(format)>(lp, lower.values, hp, higher.values, positions, values);
  });
}

size_t mergeSumIntoDense(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                         void* dense, size_t count) {
  return withFormat(type, size_t{0}, [&](auto format) {
    ArrayPositions lp(lower), hp(higher);
    return mergeToDense<decltype(format)>(lp, lower.values, hp, higher.values, dense, count);
  });
}

size_t mergeSumGapCoded(spcclDataType_t type, const SortedPairs& pairs, const GapCodedPairs& coded,
                        bool codedIsLower, uint64_t universe, uint64_t* positions, void* values) {
  return withFormat(type, kMalformedGapCode, [&](auto format) {
    return withGapCodedOperand(pairs, coded, codedIsLower, universe,
                               [&](auto& lp, const void* lv, auto& hp, const void* hv) {
                                 return mergeToPairs<decltype(format)>(lp, lv, hp, hv, positions,
                                                                       values);
                               });
  });
}

size_t mergeSumGapCodedIntoDense(spcclDataType_t type, const SortedPairs& pairs,
                                 const GapCodedPairs& coded, bool codedIsLower, void* dense,
                                 size_t count) {
  return withFormat(type, kMalformedGapCode, [&](auto format) {
    return withGapCodedOperand(
        pairs, coded, codedIsLower, count, [&](auto& lp, const void* lv, auto& hp, const void* hv) {
          return mergeToDense<decltype(format)>(lp, lv, hp, hv, dense, count);
        });
  });
}

}  // namespace spccl::kernels

// mergeSum / mergeSumIntoDense (sparse_kernels.h) on the CPU.
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
// ascending order, lower + higher where both hold a position.
template <typename Format, typename Emit>
void mergeElements(const SortedPairs& lower, const SortedPairs& higher, Emit&& emit) {
  using Storage = typename Format::Storage;
  using Bits = StorageBits<Storage>;
  static_assert(sizeof(Bits) == sizeof(Storage));
  const uint64_t* lp = lower.positions;
  const uint64_t* hp = higher.positions;
  const auto* lv = static_cast<const unsigned char*>(lower.values);
  const auto* hv = static_cast<const unsigned char*>(higher.values);
  const size_t ln = lower.count, hn = higher.count;
  size_t a = 0, b = 0;
  while (a < ln && b < hn) {
    const uint64_t pa = lp[a], pb = hp[b];
    const Bits va = loadBits<Bits>(lv, a), vb = loadBits<Bits>(hv, b);
    const bool takeA = pa <= pb, takeB = pb <= pa;
    const Bits one = selectBits(takeA, va, vb);
    emit(takeA ? pa : pb, selectBits(takeA && takeB, sumBits<Format>(va, vb), one));
    a += takeA;
    b += takeB;
  }
  for (; a < ln; ++a) emit(lp[a], loadBits<Bits>(lv, a));
  for (; b < hn; ++b) emit(hp[b], loadBits<Bits>(hv, b));
}

template <typename Format>
size_t mergeToPairs(const SortedPairs& lower, const SortedPairs& higher, uint64_t* positions,
                    void* values) {
  using Bits = StorageBits<typename Format::Storage>;
  auto* out = static_cast<unsigned char*>(values);
  size_t k = 0;
  mergeElements<Format>(lower, higher, [&](uint64_t at, Bits value) {
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

template <typename Format>
size_t mergeToDense(const SortedPairs& lower, const SortedPairs& higher, void* dense,
                    size_t count) {
  using Storage = typename Format::Storage;
  using Bits = StorageBits<Storage>;
  constexpr size_t B = sizeof(Bits);
  auto* out = static_cast<unsigned char*>(dense);
  const uint64_t* lp = lower.positions;
  const uint64_t* hp = higher.positions;
  const auto* lv = static_cast<const unsigned char*>(lower.values);
  const auto* hv = static_cast<const unsigned char*>(higher.values);
  const size_t ln = lower.count, hn = higher.count;
  auto isNonZero = [](Bits bits) {
    return !ZeroTest<Format>::isZero(std::bit_cast<Storage>(bits));
  };
  uint64_t taken[kDenseBlock / 64];
  size_t a = 0, b = 0, nonZeros = 0;
  for (size_t base = 0; base < count; base += kDenseBlock) {
    const size_t end = count - base < kDenseBlock ? count : base + kDenseBlock;
    unsigned char* block = out + base * B;
    std::memset(block, 0, (end - base) * B);
    std::memset(taken, 0, sizeof(taken));
    for (; a < ln && lp[a] < end; ++a) {
      const size_t i = static_cast<size_t>(lp[a] - base);
      const Bits v = loadBits<Bits>(lv, a);
      std::memcpy(block + i * B, &v, B);
      taken[i / 64] |= uint64_t{1} << (i % 64);
      nonZeros += isNonZero(v);
    }
    for (; b < hn && hp[b] < end; ++b) {
      const size_t i = static_cast<size_t>(hp[b] - base);
      const Bits vl = loadBits<Bits>(block, i), vh = loadBits<Bits>(hv, b);
      const bool both = ((taken[i / 64] >> (i % 64)) & 1) != 0;
      const Bits v = selectBits(both, sumBits<Format>(vl, vh), vh);
      std::memcpy(block + i * B, &v, B);
      nonZeros += isNonZero(v);
      nonZeros -= both && isNonZero(vl);
    }
  }
  return nonZeros;
}

}  // namespace

size_t mergeSum(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                uint64_t* positions, void* values) {
  return withFormat(type, size_t{0}, [&](auto format) {
    return mergeToPairs<decltype(format)>(lower, higher, positions, values);
  });
}

size_t mergeSumIntoDense(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                         void* dense, size_t count) {
  return withFormat(type, size_t{0}, [&](auto format) {
    return mergeToDense<decltype(format)>(lower, higher, dense, count);
  });
}

}  // namespace spccl::kernels

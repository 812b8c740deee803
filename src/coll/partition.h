// The index arithmetic the dense schedules share: how a buffer is cut into
// per-rank blocks and pipeline slices, the binomial tree over relative
// ranks, and the power-of-two folding of recursive doubling. Pure
// functions, so every rank computes the same layout from the same
// (count, nranks, rank) and the unit tests can check them exhaustively.
#pragma once

#include <cstddef>

namespace spccl {

// A run of elements [offset, offset + count).
struct ElementRange {
  size_t offset = 0;
  size_t count = 0;
  size_t end() const { return offset + count; }
  bool operator==(const ElementRange&) const = default;
};

// Block `index` of `count` elements cut into `parts` nearly equal blocks:
// the first count % parts blocks hold one element more. Blocks may be
// empty when count < parts; both ends of a message then skip it.
inline ElementRange evenBlock(size_t count, int parts, int index) {
  const size_t n = static_cast<size_t>(parts);
  const size_t i = static_cast<size_t>(index);
  const size_t base = count / n;
  const size_t extra = count % n;
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

// Elements per pipeline slice: chunkBytes rounded down to whole elements,
// at least one element.
inline size_t sliceElements(size_t chunkBytes, size_t elementSize) {
  size_t elements = elementSize == 0 ? 0 : chunkBytes / elementSize;
  return elements == 0 ? 1 : elements;
}

// How many slices of sliceElems cover count elements (0 for an empty run).
inline size_t sliceCount(size_t count, size_t sliceElems) {
  return (count + sliceElems - 1) / sliceElems;
}

// Slice `index` of `range`, in the same element space as range.
inline ElementRange sliceOf(ElementRange range, size_t sliceElems, size_t index) {
  size_t begin = index * sliceElems;
  size_t count = range.count - begin < sliceElems ? range.count - begin : sliceElems;
  return {range.offset + begin, count};
}

// Walks the slices of a range in order.
struct SliceCursor {
  ElementRange range;
  size_t sliceElems = 1;
  size_t next = 0;
  bool advance(ElementRange* slice) {
    if (next * sliceElems >= range.count) return false;
    *slice = sliceOf(range, sliceElems, next++);
    return true;
  }
};

inline int positiveMod(int value, int modulus) {
  int r = value % modulus;
  return r < 0 ? r + modulus : r;
}

// Largest power of two <= n (n >= 1).
inline int largestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// ceil(log2(n)) for n >= 1: the rounds of a binomial tree or dissemination.
inline int ceilLog2(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// ---- binomial tree over relative ranks (relative rank 0 is the root) ----
// A node v receives from v with its lowest set bit cleared and sends to
// v + 2^k for every 2^k below its lowest set bit (all 2^k < n for the
// root), so the subtree of child v + 2^k covers [v + 2^k, v + 2^(k+1)).

inline int relativeRank(int rank, int root, int nranks) { return positiveMod(rank - root, nranks); }
inline int absoluteRank(int relative, int root, int nranks) { return (relative + root) % nranks; }

// -1 for the root.
inline int binomialParent(int relative) { return relative == 0 ? -1 : (relative & (relative - 1)); }

// Upper bound (exclusive) on the child distances of `relative`: its lowest
// set bit, or for the root the first power of two >= nranks.
inline int binomialChildSpan(int relative, int nranks) {
  if (relative != 0) return relative & -relative;
  return 1 << ceilLog2(nranks);
}

// Number of children of `relative`, and the i-th child counted from the
// nearest (smallest subtree) one; children beyond nranks do not exist.
inline int binomialChildCount(int relative, int nranks) {
  int children = 0;
  for (int distance = 1; distance < binomialChildSpan(relative, nranks); distance *= 2)
    if (relative + distance < nranks) ++children;
  return children;
}
inline int binomialChild(int relative, int index) { return relative + (1 << index); }

// ---- recursive doubling folding for a non-power-of-two rank count ----
// With p = largestPowerOfTwoAtMost(n), rank r >= p hands its data to
// r - p before the power-of-two rounds and gets the result back after.
struct FoldRole {
  int powerOfTwo = 1;    // p
  bool folded = false;   // r >= p: sits the rounds out
  int foldPartner = -1;  // r - p for folded ranks, r + p for their hosts, -1 otherwise
};

inline FoldRole foldRole(int rank, int nranks) {
  FoldRole role;
  role.powerOfTwo = largestPowerOfTwoAtMost(nranks);
  if (rank >= role.powerOfTwo) {
    role.folded = true;
    role.foldPartner = rank - role.powerOfTwo;
  } else if (rank + role.powerOfTwo < nranks) {
    role.foldPartner = rank + role.powerOfTwo;
  }
  return role;
}

}  // namespace spccl

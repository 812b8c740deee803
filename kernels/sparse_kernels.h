// Data-parallel primitives of sparse all-reduce (CPU reference in
// kernels/cpu/sparse; CUDA versions slot in later). Values are stored in the
// collective's datatype, `valueBytes = spcclTypeSize(type)` each; indices are
// uint64_t everywhere inside spccl (wire formats choose their own width).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spccl.h"

namespace spccl::kernels {

// Which full-block mask countNonZeros and extractNonZeros use on x86-64:
// the best the CPU has (AVX2 with BMI where present, else SSE2), or the
// SSE2 baseline whatever the CPU. Process-wide; Baseline is for the tests
// of that path on machines that have AVX2.
enum class ScanMask { Best, Baseline };
void selectScanMask(ScanMask mask);

// An element is zero when it compares equal to 0 (so -0.0 is zero; NaN is not).
size_t countNonZeros(spcclDataType_t type, const void* dense, size_t count);
// Writes the non-zeros in ascending index order, at most `capacity` of
// them (indices and values hold capacity entries); returns how many there
// are in all, so a result above capacity means the output was cut short.
size_t extractNonZeros(spcclDataType_t type, const void* dense, size_t count, uint64_t* indices,
                       void* values, size_t capacity);
// The same non-zeros as a bitmap of ceil(count/8) bytes (bit i of byte
// i/8: element i is non-zero; the last byte's bits past count clear) and
// their values in index order; `values` must hold count values (a
// branch-free copy writes scratch past the last non-zero). Returns the
// number of non-zeros.
size_t compactNonZeros(spcclDataType_t type, const void* dense, size_t count, unsigned char* bitmap,
                       void* values);
// dense[indices[i]] = dense[indices[i]] op values[i], in i order (so
// duplicates are combined deterministically). op: sum (avg reduces as sum).
void scatterReduce(spcclDataType_t type, spcclRedOp_t op, void* dense, const uint64_t* indices,
                   const void* values, size_t nnz);
// Writes all `count` elements of dense: values[i] at indices[i] (unique,
// ascending, < count) and zero everywhere else, in one sequential pass (no
// separate clearing pass, no random writes).
void densify(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
             void* dense, size_t count);
// The same for unique indices in any order: clears dense, then scatters.
void densifyUnordered(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                      void* dense, size_t count);
// dense[indices[i]] = values[i] (densifyUnordered without the clearing).
void scatterCopy(size_t valueBytes, const uint64_t* indices, const void* values, size_t nnz,
                 void* dense);
// One operand of a merge: `count` pairs, positions unique and ascending.
struct SortedPairs {
  const uint64_t* positions = nullptr;
  const void* values = nullptr;
  size_t count = 0;
};
// The union of two sorted pair lists, positions ascending; where both hold
// a position its value is lower + higher (sum, computed as the dense reduce
// kernel computes lower[i] + higher[i], so the operand order is part of the
// bits). positions and values hold lower.count + higher.count entries;
// returns how many were written.
size_t mergeSum(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                uint64_t* positions, void* values);
// The same union written into all `count` elements of dense (zero where
// neither list has a position), in one sequential pass; positions < count.
// Returns how many of the values written are non-zero.
size_t mergeSumIntoDense(spcclDataType_t type, const SortedPairs& lower, const SortedPairs& higher,
                         void* dense, size_t count);
// A sorted pair list as a Packed message carries it (sparse/encoding.h):
// `count` LEB128 varints in varintBytes bytes (the first position, then
// each gap minus one), and the values in position order.
struct GapCodedPairs {
  const unsigned char* varints = nullptr;
  size_t varintBytes = 0;
  const void* values = nullptr;
  size_t count = 0;
};
// mergeSum and mergeSumIntoDense with one operand gap-coded, read as the
// merge goes (no array of decoded positions, no copy of the values);
// codedIsLower says which operand it is, so the sums' bits are mergeSum's.
// The varints are checked as decodePacked checks them: a truncated
// varint, one over 64 bits, a position >= universe (count for the dense
// form) or bytes left over return kMalformedGapCode, the outputs then
// holding anything. universe must be at most 2^63.
constexpr size_t kMalformedGapCode = SIZE_MAX;
size_t mergeSumGapCoded(spcclDataType_t type, const SortedPairs& pairs, const GapCodedPairs& coded,
                        bool codedIsLower, uint64_t universe, uint64_t* positions, void* values);
size_t mergeSumGapCodedIntoDense(spcclDataType_t type, const SortedPairs& pairs,
                                 const GapCodedPairs& coded, bool codedIsLower, void* dense,
                                 size_t count);
// values[i] = dense[indices[i]].
void gatherValues(spcclDataType_t type, const void* dense, const uint64_t* indices, size_t nnz,
                  void* values);

}  // namespace spccl::kernels

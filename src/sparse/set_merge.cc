// mergeSets (set_merge.h): a two-finger merge of sorted positions.
#include "sparse/set_merge.h"

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/sparse_kernels.h"

namespace spccl::sparse {
namespace {

// Copies one value of B bytes (a fixed-size memcpy is one load and store).
template <size_t B>
inline void copyValue(unsigned char* to, const unsigned char* from) {
  std::memcpy(to, from, B);
}

// The union of two sets, positions ascending; where both hold a position the
// output slot gets lower's value for now and is listed in *commonAt, with
// the two operands gathered into lowerCommon/higherCommon for one reduce
// call. Templated on the value size so the inner loop has no memcpy calls.
template <size_t B>
size_t mergePositions(const SparseSet& lower, const SparseSet& higher, SparseSet* out,
                      std::vector<size_t>* commonAt, std::vector<unsigned char>* lowerCommon,
                      std::vector<unsigned char>* higherCommon) {
  const uint64_t* lp = lower.positions.data();
  const uint64_t* hp = higher.positions.data();
  const unsigned char* lv = lower.values.data();
  const unsigned char* hv = higher.values.data();
  const size_t ln = lower.size(), hn = higher.size();
  uint64_t* op = out->positions.data();
  unsigned char* ov = out->values.data();
  size_t a = 0, b = 0, k = 0;
  while (a < ln && b < hn) {
    if (lp[a] < hp[b]) {
      op[k] = lp[a];
      copyValue<B>(ov + k * B, lv + a * B);
      ++a;
    } else if (hp[b] < lp[a]) {
      op[k] = hp[b];
      copyValue<B>(ov + k * B, hv + b * B);
      ++b;
    } else {
      op[k] = lp[a];
      commonAt->push_back(k);
      lowerCommon->insert(lowerCommon->end(), lv + a * B, lv + (a + 1) * B);
      higherCommon->insert(higherCommon->end(), hv + b * B, hv + (b + 1) * B);
      ++a;
      ++b;
    }
    ++k;
  }
  // One side is exhausted: the rest of the other is copied as a block.
  const SparseSet& rest = a < ln ? lower : higher;
  const size_t from = a < ln ? a : b, tail = rest.size() - from;
  if (tail > 0) {  // (both sets may be empty: no memcpy from or to NULL)
    std::memcpy(op + k, rest.positions.data() + from, tail * sizeof(uint64_t));
    std::memcpy(ov + k * B, rest.values.data() + from * B, tail * B);
  }
  return k + tail;
}
}  // namespace

void mergeSets(const kernels::KernelTable& table, spcclDataType_t type, size_t valueBytes,
               const SparseSet& lower, const SparseSet& higher, SparseSet* out) {
  const size_t bound = lower.size() + higher.size();
  out->positions.resize(bound);
  out->values.resize(bound * valueBytes);
  std::vector<size_t> commonAt;
  std::vector<unsigned char> lowerCommon, higherCommon;
  size_t merged = 0;
  switch (valueBytes) {
    case 1:
      merged = mergePositions<1>(lower, higher, out, &commonAt, &lowerCommon, &higherCommon);
      break;
    case 2:
      merged = mergePositions<2>(lower, higher, out, &commonAt, &lowerCommon, &higherCommon);
      break;
    case 4:
      merged = mergePositions<4>(lower, higher, out, &commonAt, &lowerCommon, &higherCommon);
      break;
    default:
      merged = mergePositions<8>(lower, higher, out, &commonAt, &lowerCommon, &higherCommon);
      break;
  }
  out->positions.resize(merged);
  out->values.resize(merged * valueBytes);
  if (commonAt.empty()) return;
  std::vector<unsigned char> sums(lowerCommon.size());
  kernels::reduce(table, type, spcclSum, sums.data(), lowerCommon.data(), higherCommon.data(),
                  commonAt.size());
  for (size_t i = 0; i < commonAt.size(); ++i)
    std::memcpy(&out->values[commonAt[i] * valueBytes], &sums[i * valueBytes], valueBytes);
}

void dropZeros(spcclDataType_t type, size_t valueBytes, SparseSet* set) {
  const size_t size = set->size();
  std::vector<uint64_t> kept(size);
  std::vector<unsigned char> values(size * valueBytes);
  const size_t nnz =
      kernels::extractNonZeros(type, set->values.data(), size, kept.data(), values.data(), size);
  if (nnz == size) return;
  for (size_t i = 0; i < nnz; ++i) set->positions[i] = set->positions[kept[i]];
  set->positions.resize(nnz);
  values.resize(nnz * valueBytes);
  set->values = std::move(values);
}

}  // namespace spccl::sparse

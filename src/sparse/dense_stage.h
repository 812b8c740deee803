// Hierarchical Centralization's dense stages (docs/algorithms.md 2.4). Zen's
// HC sends the merged set every stage, and at high density that set nears
// the whole tensor: a two-finger merge of millions of pairs, with a
// mispredicted branch per pair, then costs ten times a pass over the dense
// tensor. Once a merged set holds at least M/8 pairs a rank keeps it as a
// dense tensor instead: a received message is added into it block by block
// through the dense reduce kernel (lower ranks' operand first, as the merge
// does; an absent position adds +0, which leaves every value's bits as they
// are, since no value is -0.0), and its own message is the tensor's bitmap
// or the tensor itself, whichever is smaller (section 2.6 (2): at >= M/8
// pairs these beat Coo and Packed). The result's bits are those of the
// sparse merges, so each rank may switch on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "sparse/encoding.h"
#include "sparse/sparse_set.h"
#include "spccl.h"

namespace spccl::sparse {

// Whether a merge of this many pairs over `universe` positions is cheaper
// on a dense tensor (the M/8 break-even above).
inline bool mergeDensely(uint64_t pairs, uint64_t universe) { return 8 * pairs >= universe; }

// Encodes the non-zeros of a dense tensor of `universe` values as the
// cheapest allowed encoding into *out (grown, never shrunk, so it keeps
// its pages from call to call). *bytes: the message's size; *nnz: the
// tensor's non-zeros. scratch: room for the pairs when neither Bitmap nor
// Dense is allowed.
Encoding encodeDenseTensor(spcclDataType_t type, const void* dense, uint64_t universe,
                           unsigned allowed, std::vector<unsigned char>* out, size_t* bytes,
                           size_t* nnz, SparseSet* scratch);

// *out = the non-zeros of a dense tensor of `count` values, as pairs
// (a schedule's dense result handed back as a set).
void denseToPairs(spcclDataType_t type, const void* dense, size_t count, SparseSet* out);

// How a received message meets the dense tensor.
enum class DenseMerge : uint8_t {
  Place,      // acc = message (absent positions zero)
  AddLower,   // acc = message + acc: the message holds the lower ranks' data
  AddHigher,  // acc = acc + message
};

// Checks the message (flags and body, as decodeSet does) and merges it into
// acc, `universe` values of `type`. scratch: for Coo and Packed messages,
// which are decoded into pairs first.
spcclResult_t mergeMessageIntoDense(const kernels::KernelTable& table, spcclDataType_t type,
                                    const unsigned char* data, size_t bytes, uint8_t flags,
                                    uint64_t universe, unsigned allowed, int peer, DenseMerge how,
                                    void* acc, SparseSet* scratch);

// The number of pairs a message says it holds (its header), 0 if it has
// no header; for deciding where to merge it before decoding.
uint64_t messagePairs(const unsigned char* data, size_t bytes);

}  // namespace spccl::sparse

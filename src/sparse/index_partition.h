// Which rank owns (aggregates) each index of a tensor of M elements, and the
// position of an index inside its owner's index set I_p, so that messages
// about partition p can be coded against |I_p| positions (bitmaps on both
// push and pull). Every rank builds the same partition from (M, n, seed).
//
//  - ZenHash: p = h0(idx) (Zen section 3.2, a MurmurHash3 finaliser keyed by
//    the seed); I_p sorted ascending, position = rank of idx in I_p, which
//    needs an O(M) table built once per (M, n, seed) and cached (Zen computes
//    it offline, section 3.3). The position of idx is found by counting, so
//    push encode and pull decode use the very same function (a public
//    reproduction of Zen used two different moduli and lost 5 % of indices).
//  - Permutation (docs/algorithms.md 2.6 (1)): a keyed Feistel permutation pi of [0, M)
//    with cycle-walking; p owns the contiguous range [p*M/n, (p+1)*M/n) of
//    pi-space; position = pi(idx) - start(p); inverse computed, no table.
//  - Contiguous: p owns [p*M/n, (p+1)*M/n) of index space (block sparse,
//    hierarchical centralization, tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/device_sparse/partition_math.h"
#include "kernels/zen_hash.h"

namespace spccl::sparse {

enum class PartitionKind : uint8_t { ZenHash = 1, Permutation = 2, Contiguous = 3 };
// The device's element code names the kinds by the same values.
static_assert(static_cast<uint32_t>(PartitionKind::ZenHash) ==
                  kernels::device_sparse::kZenHashPartition &&
              static_cast<uint32_t>(PartitionKind::Permutation) ==
                  kernels::device_sparse::kPermutationPartition &&
              static_cast<uint32_t>(PartitionKind::Contiguous) ==
                  kernels::device_sparse::kContiguousPartition);

class IndexPartition {
 public:
  virtual ~IndexPartition() = default;
  virtual PartitionKind kind() const = 0;
  int parts() const { return parts_; }
  uint64_t universe() const { return universe_; }  // M
  // Owner of idx < M.
  virtual int owner(uint64_t idx) const = 0;
  // Position of idx within its owner's set, in [0, partSize(owner(idx))).
  virtual uint64_t position(uint64_t idx) const = 0;
  // Inverse: the index at `position` of part p.
  virtual uint64_t index(int p, uint64_t position) const = 0;
  virtual uint64_t partSize(int p) const = 0;
  // owner() and position() of `count` indices at once: one evaluation of
  // the permutation per index instead of two, and no virtual call per
  // index. The default makes the two calls.
  virtual void locate(const uint64_t* indices, size_t count, int* owners,
                      uint64_t* positions) const;
  // index(p, positions[i]) for `count` positions of part p at once (BP's
  // pull maps every received position back; no virtual call per index).
  // out may be positions itself (mapped in place).
  virtual void indices(int p, const uint64_t* positions, size_t count, uint64_t* out) const;
  // The partition as element code for the device bucketing
  // (kernels/device_sparse/partition_math.h): the same owners and
  // positions, computed by the same source.
  virtual kernels::device_sparse::PartitionMath deviceMath() const = 0;

 protected:
  IndexPartition(uint64_t universe, int parts) : universe_(universe), parts_(parts) {}
  uint64_t universe_;
  int parts_;
};

// ZenHash tables are cached per (M, n, seed) for the life of the process.
std::shared_ptr<const IndexPartition> makePartition(PartitionKind kind, uint64_t universe,
                                                    int parts, uint64_t seed);

// h0 of Zen and its mix (kernels/zen_hash.h, shared with the CUDA kernels).
using kernels::mix64;
using kernels::zenOwner;

}  // namespace spccl::sparse

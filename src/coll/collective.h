// Dense collectives as schedules over CollContext. Every algorithm is
// registered once (name, description, cost) in algorithms.cc; selection,
// logs, perf binaries and docs read that one table.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// One collective call's arguments, already validated by the API layer.
// In-place forms follow NCCL: AllReduce/Broadcast/Reduce sendbuff ==
// recvbuff; AllGather sendbuff == recvbuff + rank*count*size; ReduceScatter
// recvbuff == sendbuff + rank*count*size.
struct CollArgs {
  CollType type = CollType::None;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // per NCCL: AllGather sendcount, ReduceScatter recvcount, AllToAll per peer
  spcclDataType_t datatype = spcclFloat32;
  spcclRedOp_t op = spcclSum;
  int root = 0;
  // AllToAllv only, in elements, nranks entries each.
  const size_t* sendcounts = nullptr;
  const size_t* sdispls = nullptr;
  const size_t* recvcounts = nullptr;
  const size_t* rdispls = nullptr;
};

// The alpha-beta cost (seconds) of a schedule; inputs every rank agrees on.
struct CostInput {
  size_t bytes = 0;  // the buffer the collective reduces/moves, per rank
  int nranks = 1;
  LinkModel link;
  size_t chunkBytes = 1 << 20;  // slice size of pipelined schedules (SPCCL_CHUNK_BYTES)
};

struct DenseAlgorithm {
  const char* name;         // "ring", "recursive_doubling", ...
  CollType type;            // which collective it implements
  const char* description;  // one line, for spccl_info and logs
  double (*cost)(const CostInput& input);
  spcclResult_t (*run)(CollContext& ctx, const CollArgs& args);
};

std::span<const DenseAlgorithm> denseAlgorithms();

// Selects, runs and finishes (Avg's division) one dense collective.
spcclResult_t runDenseCollective(CollContext& ctx, const CollArgs& args,
                                 const std::string& algorithmOverride);

}  // namespace spccl

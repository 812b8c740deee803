// The load-balancing collectives as schedules on a CollContext. They reuse
// the dense schedules of src/coll: the pipelined chain is the pipelined
// tree whose every node, the root included, has a single child, which is
// exactly what makes the straggler send (or receive) each byte once while
// the helpers relay (SEMI-migration, section IV-A, Fig. 4). Arguments are
// validated by the API layer.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

// The dense algorithm the migration broadcast and reduce run.
constexpr const char* kMigrationTreeAlgorithm = "pipelined_chain";

spcclResult_t migrationBroadcast(CollContext& ctx, void* buffer, size_t count,
                                 spcclDataType_t datatype, int straggler);
spcclResult_t migrationReduce(CollContext& ctx, const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, spcclRedOp_t op, int dest);

struct MigratedPart {
  const void* data = nullptr;
  size_t count = 0;
  size_t offset = 0;  // where it folds into the rank's contribution
};
// The op `migrated` is folded in with: Avg folds as Sum, the all-reduce
// divides the whole result once.
constexpr spcclRedOp_t foldOp(spcclRedOp_t op) { return op == spcclAvg ? spcclSum : op; }

// The merged all-reduce's second step: an in-place all-reduce of the
// folded contribution in recvbuff (host and device paths alike).
inline CollArgs foldedAllReduceArgs(void* recvbuff, size_t count, spcclDataType_t datatype,
                                    spcclRedOp_t op) {
  return CollArgs{.type = CollType::AllReduce,
                  .sendbuff = recvbuff,
                  .recvbuff = recvbuff,
                  .count = count,
                  .datatype = datatype,
                  .op = op};
}

// recvbuff = sendbuff with `migrated` folded in by foldOp(op) at
// [migrated.offset, + migrated.count), in one pass (the CPU's; the device
// path's is migrate/device_merged_all_reduce.h).
void foldMigratedPart(const kernels::KernelTable& kernels, const void* sendbuff, void* recvbuff,
                      size_t count, const MigratedPart& migrated, spcclDataType_t datatype,
                      spcclRedOp_t op);

// Folds `migrated` into the contribution while copying it to recvbuff
// (foldMigratedPart), then all-reduces recvbuff in place with the dense
// algorithm the communicator would choose (allReduceOverride: SPCCL_ALGO).
spcclResult_t mergedMigrationAllReduce(CollContext& ctx, const void* sendbuff, void* recvbuff,
                                       size_t count, const MigratedPart& migrated,
                                       spcclDataType_t datatype, spcclRedOp_t op,
                                       const std::string& allReduceOverride);

// Peer-to-peer scatter and gather: the root exchanges one block with every
// other rank itself (the baseline broadcast-reduce is compared with).
spcclResult_t linearScatter(CollContext& ctx, const void* sendbuff, void* recvbuff,
                            size_t blockCount, spcclDataType_t datatype, int root);
spcclResult_t linearGather(CollContext& ctx, const void* sendbuff, void* recvbuff,
                           size_t blockCount, spcclDataType_t datatype, int root);

}  // namespace spccl::migrate

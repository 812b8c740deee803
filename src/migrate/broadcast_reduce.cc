// Broadcast-reduce migration and its merged form (SEMI-migration, section IV-A).
#include <cstring>

#include "base/check.h"
#include "coll/collective.h"
#include "migrate/migration_schedules.h"

namespace spccl::migrate {

spcclResult_t migrationBroadcast(CollContext& ctx, void* buffer, size_t count,
                                 spcclDataType_t datatype, int straggler) {
  const CollArgs args{.type = CollType::Broadcast,
                      .sendbuff = buffer,
                      .recvbuff = buffer,
                      .count = count,
                      .datatype = datatype,
                      .root = straggler};
  return runDenseCollective(ctx, args, kMigrationTreeAlgorithm);
}

spcclResult_t migrationReduce(CollContext& ctx, const void* sendbuff, void* recvbuff, size_t count,
                              spcclDataType_t datatype, spcclRedOp_t op, int dest) {
  const CollArgs args{.type = CollType::Reduce,
                      .sendbuff = sendbuff,
                      .recvbuff = recvbuff,
                      .count = count,
                      .datatype = datatype,
                      .op = op,
                      .root = dest};
  return runDenseCollective(ctx, args, kMigrationTreeAlgorithm);
}

void foldMigratedPart(const kernels::KernelTable& kernels, const void* sendbuff, void* recvbuff,
                      size_t count, const MigratedPart& migrated, spcclDataType_t datatype,
                      spcclRedOp_t op) {
  // The local reduce that replaces the separate reduce collective
  // (SEMI-migration, section IV-A, reduce merging).
  const size_t es = spcclTypeSize(datatype);
  const char* in = static_cast<const char*>(sendbuff);
  char* out = static_cast<char*>(recvbuff);
  const size_t foldBegin = migrated.offset * es;
  const size_t foldEnd = (migrated.offset + migrated.count) * es;
  if (in != out) {
    if (foldBegin > 0) std::memcpy(out, in, foldBegin);
    if (count * es > foldEnd) std::memcpy(out + foldEnd, in + foldEnd, count * es - foldEnd);
  }
  if (migrated.count > 0) {
    const kernels::ReduceFn fold = kernels.reduce[datatype][foldOp(op)];
    fold(out + foldBegin, in + foldBegin, migrated.data, migrated.count);
  }
}

spcclResult_t mergedMigrationAllReduce(CollContext& ctx, const void* sendbuff, void* recvbuff,
                                       size_t count, const MigratedPart& migrated,
                                       spcclDataType_t datatype, spcclRedOp_t op,
                                       const std::string& allReduceOverride) {
  foldMigratedPart(ctx.kernels(), sendbuff, recvbuff, count, migrated, datatype, op);
  return runDenseCollective(ctx, foldedAllReduceArgs(recvbuff, count, datatype, op),
                            allReduceOverride);
}

}  // namespace spccl::migrate

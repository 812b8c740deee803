// API: the migration collectives (SPEC section 4). Arguments are checked
// here, with messages that name the argument; the schedules in
// migration_schedules.h receive only valid calls.
#include <limits>

#include "api/migration_call.h"
#include "base/check.h"
#include "core/comm.h"
#include "migrate/migration_schedules.h"
#include "migrate/migration_slice.h"
#include "spccl.h"

using namespace spccl;
using namespace spccl::migrate;

namespace {

spcclResult_t checkComm(spcclComm_t comm, const void* stream, const char* call) {
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: comm is NULL", call);
  if (stream != nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: stream must be NULL (host buffers); device memory is not supported yet",
                      call);
  return spcclSuccess;
}

spcclResult_t checkType(spcclDataType_t datatype, const char* call) {
  if (static_cast<int>(datatype) < 0 || datatype >= spcclNumTypes)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: datatype %d is not a valid spcclDataType_t", call,
                      static_cast<int>(datatype));
  return spcclSuccess;
}

spcclResult_t checkOp(spcclRedOp_t op, const char* call) {
  if (static_cast<int>(op) < 0 || op >= spcclNumOps)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: op %d is not a valid spcclRedOp_t", call,
                      static_cast<int>(op));
  return spcclSuccess;
}

// `what` names the argument: "straggler", "dest", "root".
spcclResult_t checkRank(spcclComm_t comm, int rank, const char* what, const char* call) {
  if (rank < 0 || rank >= comm->nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %d is out of range for %d ranks", call, what,
                      rank, comm->nranks);
  return spcclSuccess;
}

// count * factor elements of datatype, in bytes, failing on overflow.
spcclResult_t checkSize(size_t count, size_t factor, spcclDataType_t datatype, const char* what,
                        const char* call, size_t* bytes) {
  size_t elements = 0;
  if (__builtin_mul_overflow(count, factor, &elements) ||
      __builtin_mul_overflow(elements, spcclTypeSize(datatype), bytes) ||
      *bytes > static_cast<size_t>(std::numeric_limits<ssize_t>::max()))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %zu overflows the addressable size", call, what,
                      count);
  return spcclSuccess;
}

spcclResult_t checkBuffer(const void* buffer, size_t bytes, const char* name, const char* call) {
  if (buffer == nullptr && bytes > 0)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s is NULL", call, name);
  return spcclSuccess;
}

// The checks every data-moving call shares; *bytes = count * factor elements.
spcclResult_t checkCommon(spcclComm_t comm, const void* stream, spcclDataType_t datatype,
                          size_t count, size_t factor, const char* countName, const char* call,
                          size_t* bytes) {
  SPCCL_CHECK(checkComm(comm, stream, call));
  SPCCL_CHECK(checkType(datatype, call));
  return checkSize(count, factor, datatype, countName, call, bytes);
}

spcclResult_t checkMigratedPart(size_t count, const void* migrated, size_t migratedCount,
                                size_t migratedOffset, spcclDataType_t datatype, const char* call) {
  size_t end = 0;
  if (__builtin_add_overflow(migratedOffset, migratedCount, &end) || end > count)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: migratedOffset %zu + migratedCount %zu exceeds count %zu", call,
                      migratedOffset, migratedCount, count);
  return checkBuffer(migrated, migratedCount * spcclTypeSize(datatype), "migrated", call);
}

}  // namespace

extern "C" {

spcclResult_t spcclMigrateBroadcast(void* buff, size_t count, spcclDataType_t datatype,
                                    int straggler, spcclComm_t comm, void* stream) {
  const char* call = "spcclMigrateBroadcast";
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommon(comm, stream, datatype, count, 1, "count", call, &bytes);
  if (res == spcclSuccess) res = checkRank(comm, straggler, "straggler", call);
  if (res == spcclSuccess) res = checkBuffer(buff, bytes, "buff", call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  return runMigrationCall(
      comm, {call, "straggler"},
      migrationSignature(MigrationKind::Broadcast, datatype, spcclSum, straggler, count),
      [&](CollContext& ctx) { return migrationBroadcast(ctx, buff, count, datatype, straggler); });
}

spcclResult_t spcclMigrateSlice(spcclComm_t comm, int straggler, size_t total, size_t* begin,
                                size_t* length) {
  const char* call = "spcclMigrateSlice";
  clearThreadLastError();
  spcclResult_t res = checkComm(comm, nullptr, call);
  if (res == spcclSuccess) res = checkRank(comm, straggler, "straggler", call);
  if (res == spcclSuccess && begin == nullptr)
    res = SPCCL_FAIL(spcclInvalidArgument, "%s: begin is NULL", call);
  if (res == spcclSuccess && length == nullptr)
    res = SPCCL_FAIL(spcclInvalidArgument, "%s: length is NULL", call);
  if (res != spcclSuccess) return finishCall(comm, res);
  const ElementRange slice = migrationSlice(comm->rank, straggler, comm->nranks, total);
  *begin = slice.offset;
  *length = slice.count;
  return spcclSuccess;
}

spcclResult_t spcclMigrateReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 spcclDataType_t datatype, spcclRedOp_t op, int dest,
                                 spcclComm_t comm, void* stream) {
  const char* call = "spcclMigrateReduce";
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommon(comm, stream, datatype, count, 1, "count", call, &bytes);
  if (res == spcclSuccess) res = checkOp(op, call);
  if (res == spcclSuccess) res = checkRank(comm, dest, "dest", call);
  if (res == spcclSuccess) res = checkBuffer(sendbuff, bytes, "sendbuff", call);
  if (res == spcclSuccess && comm->rank == dest)
    res = checkBuffer(recvbuff, bytes, "recvbuff", call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  return runMigrationCall(
      comm, {call, "dest"}, migrationSignature(MigrationKind::Reduce, datatype, op, dest, count),
      [&](CollContext& ctx) {
        return migrationReduce(ctx, sendbuff, recvbuff, count, datatype, op, dest);
      });
}

spcclResult_t spcclMigrateAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    const void* migrated, size_t migratedCount,
                                    size_t migratedOffset, spcclDataType_t datatype,
                                    spcclRedOp_t op, spcclComm_t comm, void* stream) {
  const char* call = "spcclMigrateAllReduce";
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommon(comm, stream, datatype, count, 1, "count", call, &bytes);
  if (res == spcclSuccess) res = checkOp(op, call);
  if (res == spcclSuccess) res = checkBuffer(sendbuff, bytes, "sendbuff", call);
  if (res == spcclSuccess) res = checkBuffer(recvbuff, bytes, "recvbuff", call);
  if (res == spcclSuccess)
    res = checkMigratedPart(count, migrated, migratedCount, migratedOffset, datatype, call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  const MigratedPart part{migrated, migratedCount, migratedOffset};
  return runMigrationCall(
      comm, {call, nullptr},
      migrationSignature(MigrationKind::MergedAllReduce, datatype, op, -1, count),
      [&](CollContext& ctx) {
        return mergedMigrationAllReduce(ctx, sendbuff, recvbuff, count, part, datatype, op,
                                        ctx.denseAlgorithm());
      });
}

spcclResult_t spcclScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                           spcclDataType_t datatype, int root, spcclComm_t comm, void* stream) {
  const char* call = "spcclScatter";
  clearThreadLastError();
  size_t allBytes = 0;
  spcclResult_t res = checkCommon(comm, stream, datatype, recvcount,
                                  comm != nullptr ? static_cast<size_t>(comm->nranks) : 1,
                                  "recvcount", call, &allBytes);
  if (res == spcclSuccess) res = checkRank(comm, root, "root", call);
  if (res == spcclSuccess && comm->rank == root)
    res = checkBuffer(sendbuff, allBytes, "sendbuff", call);
  if (res == spcclSuccess) res = checkBuffer(recvbuff, allBytes / comm->nranks, "recvbuff", call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  return runMigrationCall(
      comm, {call, "root"},
      migrationSignature(MigrationKind::Scatter, datatype, spcclSum, root, recvcount),
      [&](CollContext& ctx) {
        return linearScatter(ctx, sendbuff, recvbuff, recvcount, datatype, root);
      });
}

spcclResult_t spcclGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                          spcclDataType_t datatype, int root, spcclComm_t comm, void* stream) {
  const char* call = "spcclGather";
  clearThreadLastError();
  size_t allBytes = 0;
  spcclResult_t res = checkCommon(comm, stream, datatype, sendcount,
                                  comm != nullptr ? static_cast<size_t>(comm->nranks) : 1,
                                  "sendcount", call, &allBytes);
  if (res == spcclSuccess) res = checkRank(comm, root, "root", call);
  if (res == spcclSuccess) res = checkBuffer(sendbuff, allBytes / comm->nranks, "sendbuff", call);
  if (res == spcclSuccess && comm->rank == root)
    res = checkBuffer(recvbuff, allBytes, "recvbuff", call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  return runMigrationCall(
      comm, {call, "root"},
      migrationSignature(MigrationKind::Gather, datatype, spcclSum, root, sendcount),
      [&](CollContext& ctx) {
        return linearGather(ctx, sendbuff, recvbuff, sendcount, datatype, root);
      });
}

}  // extern "C"

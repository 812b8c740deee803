// API: the migration collectives (docs/algorithms.md 4). Arguments are checked
// here, with messages that name the argument; the schedules in
// migration_schedules.h receive only valid calls.
#include "api/api_guard.h"
#include "api/arguments.h"
#include "api/migration_call.h"
#include "base/check.h"
#include "core/comm.h"
#include "core/device_collective_call.h"
#include "core/device_migrate_call.h"
#include "migrate/migration_schedules.h"
#include "migrate/migration_slice.h"
#include "spccl.h"

using namespace spccl;
using namespace spccl::migrate;

namespace {

// The checks every data-moving call shares; *bytes = count elements.
spcclResult_t checkCommonAndSize(const char* call, spcclComm_t comm, const void* stream,
                                 spcclDataType_t datatype, size_t count, size_t* bytes) {
  SPCCL_CHECK(checkCommon(call, comm, stream, datatype));
  return checkSize(call, "count", count, spcclTypeSize(datatype), bytes);
}

spcclResult_t checkMigratedPart(size_t count, const void* migrated, size_t migratedCount,
                                size_t migratedOffset, spcclDataType_t datatype, const char* call) {
  size_t end = 0;
  if (__builtin_add_overflow(migratedOffset, migratedCount, &end) || end > count)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: migratedOffset %zu + migratedCount %zu exceeds count %zu", call,
                      migratedOffset, migratedCount, count);
  return checkBuffer(call, "migrated", migrated, migratedCount * spcclTypeSize(datatype));
}

// Scatter (the root sends) and gather (the root receives): the root's side
// holds nranks * count elements, every rank's own side count.
spcclResult_t checkRootedExchange(const char* call, bool rootSends, const void* sendbuff,
                                  const void* recvbuff, size_t count, spcclDataType_t datatype,
                                  int root, spcclComm_t comm, const void* stream) {
  SPCCL_CHECK(checkCommon(call, comm, stream, datatype));
  size_t allBytes = 0;
  SPCCL_CHECK(checkSize(call, rootSends ? "recvcount" : "sendcount", count,
                        comm->nranks * spcclTypeSize(datatype), &allBytes));
  SPCCL_CHECK(checkRank(call, "root", root, comm->nranks));
  const size_t ownBytes = allBytes / comm->nranks;
  const size_t rootBytes = comm->rank == root ? allBytes : 0;  // 0: not read here
  SPCCL_CHECK(checkBuffer(call, "sendbuff", sendbuff, rootSends ? rootBytes : ownBytes));
  return checkBuffer(call, "recvbuff", recvbuff, rootSends ? ownBytes : rootBytes);
}

spcclResult_t rootedExchange(const char* call, bool rootSends, const void* sendbuff, void* recvbuff,
                             size_t count, spcclDataType_t datatype, int root, spcclComm_t comm,
                             void* stream) {
  clearThreadLastError();
  const spcclResult_t res =
      checkRootedExchange(call, rootSends, sendbuff, recvbuff, count, datatype, root, comm, stream);
  if (res != spcclSuccess) return rejectCall(comm, res);
  const MigrationKind kind = rootSends ? MigrationKind::Scatter : MigrationKind::Gather;
  const size_t ownBytes = count * spcclTypeSize(datatype);
  const size_t rootBytes = comm->rank == root ? ownBytes * comm->nranks : 0;
  StagedCall staged(comm, call, stream);
  staged.add("sendbuff", sendbuff, rootSends ? rootBytes : ownBytes, device::Access::Read);
  staged.add("recvbuff", recvbuff, rootSends ? ownBytes : rootBytes, device::Access::Write);
  const CollSignature signature = migrationSignature(kind, datatype, spcclSum, root, count);
  if (joinsDeviceAllReduce(comm))  // core/device_migrate_call.h
    return runDeviceMigrateExchange(comm, staged, call, rootSends, sendbuff, recvbuff, count,
                                    datatype, root, signature);
  return runMigrationCall(comm, staged, {call, "root"}, signature, [=](const HostView& view) {
    const void* send = view(sendbuff);
    void* recv = view(recvbuff);
    return [=](CollContext& ctx) {
      return rootSends ? linearScatter(ctx, send, recv, count, datatype, root)
                       : linearGather(ctx, send, recv, count, datatype, root);
    };
  });
}

// The dense broadcast or reduce a migration call is on the device path
// (core/device_migrate_call.h).
CollArgs rootedArgs(CollType type, const void* sendbuff, void* recvbuff, size_t count,
                    spcclDataType_t datatype, spcclRedOp_t op, int root) {
  return CollArgs{.type = type,
                  .sendbuff = sendbuff,
                  .recvbuff = recvbuff,
                  .count = count,
                  .datatype = datatype,
                  .op = op,
                  .root = root};
}

// The blocking (stream) and non-blocking (request) forms of the three
// migration calls share their checks and bodies: request == nullptr runs
// the call at once or on the stream, else queues it (spcclTest/spcclWait).
spcclResult_t migrateBroadcast(const char* call, void* buff, size_t count, spcclDataType_t datatype,
                               int straggler, spcclComm_t comm, void* stream,
                               spcclRequest_t* request) {
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommonAndSize(call, comm, stream, datatype, count, &bytes);
  if (res == spcclSuccess) res = checkRank(call, "straggler", straggler, comm->nranks);
  if (res == spcclSuccess) res = checkBuffer(call, "buff", buff, bytes);
  if (res != spcclSuccess) return rejectCall(comm, res);
  StagedCall staged(comm, call, stream);
  staged.add("buff", buff, bytes, device::Access::ReadWrite);
  const CollSignature signature =
      migrationSignature(MigrationKind::Broadcast, datatype, spcclSum, straggler, count);
  if (joinsDeviceAllReduce(comm))  // core/device_migrate_call.h
    return runDeviceMigrateRooted(
        comm, staged,
        rootedArgs(CollType::Broadcast, buff, buff, count, datatype, spcclSum, straggler),
        {call, "straggler"}, signature, request);
  return runMigrationCall(
      comm, staged, {call, "straggler"}, signature,
      [=](const HostView& view) {
        void* host = view(buff);
        return [=](CollContext& ctx) {
          return migrationBroadcast(ctx, host, count, datatype, straggler);
        };
      },
      request);
}

spcclResult_t migrateReduce(const char* call, const void* sendbuff, void* recvbuff, size_t count,
                            spcclDataType_t datatype, spcclRedOp_t op, int dest, spcclComm_t comm,
                            void* stream, spcclRequest_t* request) {
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommonAndSize(call, comm, stream, datatype, count, &bytes);
  if (res == spcclSuccess) res = checkOp(call, op);
  if (res == spcclSuccess) res = checkRank(call, "dest", dest, comm->nranks);
  if (res == spcclSuccess) res = checkBuffer(call, "sendbuff", sendbuff, bytes);
  if (res == spcclSuccess && comm->rank == dest)
    res = checkBuffer(call, "recvbuff", recvbuff, bytes);
  if (res != spcclSuccess) return rejectCall(comm, res);
  StagedCall staged(comm, call, stream);
  staged.add("sendbuff", sendbuff, bytes, device::Access::Read);
  if (comm->rank == dest) staged.add("recvbuff", recvbuff, bytes, device::Access::Write);
  const CollSignature signature =
      migrationSignature(MigrationKind::Reduce, datatype, op, dest, count);
  if (joinsDeviceAllReduce(comm))  // core/device_migrate_call.h
    return runDeviceMigrateRooted(
        comm, staged,
        rootedArgs(CollType::Reduce, sendbuff, comm->rank == dest ? recvbuff : nullptr, count,
                   datatype, op, dest),
        {call, "dest"}, signature, request);
  return runMigrationCall(
      comm, staged, {call, "dest"}, signature,
      [=](const HostView& view) {
        const void* send = view(sendbuff);
        void* recv = view(recvbuff);
        return [=](CollContext& ctx) {
          return migrationReduce(ctx, send, recv, count, datatype, op, dest);
        };
      },
      request);
}

spcclResult_t migrateAllReduce(const char* call, const void* sendbuff, void* recvbuff, size_t count,
                               const void* migrated, size_t migratedCount, size_t migratedOffset,
                               spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                               void* stream, spcclRequest_t* request) {
  clearThreadLastError();
  size_t bytes = 0;
  spcclResult_t res = checkCommonAndSize(call, comm, stream, datatype, count, &bytes);
  if (res == spcclSuccess) res = checkOp(call, op);
  if (res == spcclSuccess) res = checkSendAndRecv(call, sendbuff, recvbuff, bytes);
  if (res == spcclSuccess)
    res = checkMigratedPart(count, migrated, migratedCount, migratedOffset, datatype, call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  StagedCall staged(comm, call, stream);
  staged.add("sendbuff", sendbuff, bytes, device::Access::Read);
  staged.add("recvbuff", recvbuff, bytes, device::Access::Write);
  staged.add("migrated", migrated, migratedCount * spcclTypeSize(datatype), device::Access::Read);
  const CollSignature signature =
      migrationSignature(MigrationKind::MergedAllReduce, datatype, op, -1, count);
  if (joinsDeviceAllReduce(comm))  // core/device_migrate_call.h
    return runDeviceMigrateAllReduce(comm, staged, call, sendbuff, recvbuff, count,
                                     MigratedPart{migrated, migratedCount, migratedOffset},
                                     datatype, op, signature, request);
  return runMigrationCall(
      comm, staged, {call, nullptr}, signature,
      [=](const HostView& view) {
        const void* send = view(sendbuff);
        void* recv = view(recvbuff);
        const MigratedPart part{view(migrated), migratedCount, migratedOffset};
        return [=](CollContext& ctx) {
          return mergedMigrationAllReduce(ctx, send, recv, count, part, datatype, op,
                                          ctx.denseAlgorithm());
        };
      },
      request);
}

}  // namespace

extern "C" {

spcclResult_t spcclMigrateBroadcast(void* buff, size_t count, spcclDataType_t datatype,
                                    int straggler, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclMigrateBroadcast", comm, [&]() -> spcclResult_t {
    return migrateBroadcast("spcclMigrateBroadcast", buff, count, datatype, straggler, comm, stream,
                            nullptr);
  });
}

spcclResult_t spcclImigrateBroadcast(void* buff, size_t count, spcclDataType_t datatype,
                                     int straggler, spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclImigrateBroadcast", comm, [&]() -> spcclResult_t {
    const char* call = "spcclImigrateBroadcast";
    if (request == nullptr) return rejectCall(comm, checkNotNull(call, "request", request));
    return migrateBroadcast(call, buff, count, datatype, straggler, comm, nullptr, request);
  });
}

spcclResult_t spcclMigrateReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 spcclDataType_t datatype, spcclRedOp_t op, int dest,
                                 spcclComm_t comm, void* stream) {
  return guardCommApi("spcclMigrateReduce", comm, [&]() -> spcclResult_t {
    return migrateReduce("spcclMigrateReduce", sendbuff, recvbuff, count, datatype, op, dest, comm,
                         stream, nullptr);
  });
}

spcclResult_t spcclImigrateReduce(const void* sendbuff, void* recvbuff, size_t count,
                                  spcclDataType_t datatype, spcclRedOp_t op, int dest,
                                  spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclImigrateReduce", comm, [&]() -> spcclResult_t {
    const char* call = "spcclImigrateReduce";
    if (request == nullptr) return rejectCall(comm, checkNotNull(call, "request", request));
    return migrateReduce(call, sendbuff, recvbuff, count, datatype, op, dest, comm, nullptr,
                         request);
  });
}

spcclResult_t spcclMigrateAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    const void* migrated, size_t migratedCount,
                                    size_t migratedOffset, spcclDataType_t datatype,
                                    spcclRedOp_t op, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclMigrateAllReduce", comm, [&]() -> spcclResult_t {
    return migrateAllReduce("spcclMigrateAllReduce", sendbuff, recvbuff, count, migrated,
                            migratedCount, migratedOffset, datatype, op, comm, stream, nullptr);
  });
}

spcclResult_t spcclImigrateAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                     const void* migrated, size_t migratedCount,
                                     size_t migratedOffset, spcclDataType_t datatype,
                                     spcclRedOp_t op, spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclImigrateAllReduce", comm, [&]() -> spcclResult_t {
    const char* call = "spcclImigrateAllReduce";
    if (request == nullptr) return rejectCall(comm, checkNotNull(call, "request", request));
    return migrateAllReduce(call, sendbuff, recvbuff, count, migrated, migratedCount,
                            migratedOffset, datatype, op, comm, nullptr, request);
  });
}

spcclResult_t spcclMigrateSlice(spcclComm_t comm, int straggler, size_t total, size_t* begin,
                                size_t* length) {
  return guardCommApi("spcclMigrateSlice", comm, [&]() -> spcclResult_t {
    const char* call = "spcclMigrateSlice";
    clearThreadLastError();
    spcclResult_t res = checkNotNull(call, "comm", comm);
    if (res == spcclSuccess) res = checkRank(call, "straggler", straggler, comm->nranks);
    if (res == spcclSuccess) res = checkNotNull(call, "begin", begin);
    if (res == spcclSuccess) res = checkNotNull(call, "length", length);
    if (res != spcclSuccess) return finishCall(comm, res);
    const ElementRange slice = migrationSlice(comm->rank, straggler, comm->nranks, total);
    *begin = slice.offset;
    *length = slice.count;
    return spcclSuccess;
  });
}

spcclResult_t spcclScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                           spcclDataType_t datatype, int root, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclScatter", comm, [&]() -> spcclResult_t {
    return rootedExchange("spcclScatter", true, sendbuff, recvbuff, recvcount, datatype, root, comm,
                          stream);
  });
}

spcclResult_t spcclGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                          spcclDataType_t datatype, int root, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclGather", comm, [&]() -> spcclResult_t {
    return rootedExchange("spcclGather", false, sendbuff, recvbuff, sendcount, datatype, root, comm,
                          stream);
  });
}

}  // extern "C"

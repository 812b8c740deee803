#include "core/device_migrate_call.h"

#include <memory>
#include <utility>

#include "coll/device_collectives.h"
#include "coll/device_reduce_launch.h"
#include "core/comm.h"
#include "core/device_collective_call.h"
#include "device/memory_kind.h"
#include "migrate/device_merged_all_reduce.h"
#include "migrate/device_scatter_gather.h"

namespace spccl {

namespace {

using migrate::DeviceMergedAllReduce;

// The staging's checks (one kind for sendbuff and recvbuff; a stream
// needs the driver, device buffers a context), without taking buffers.
spcclResult_t validate(StagedCall& staged) {
  const spcclResult_t same = staged.requireSameKind("sendbuff", "recvbuff");
  return same != spcclSuccess ? same : staged.validate();
}

// Whether this rank folds on the device: its three buffers device memory
// and both kernels (the fold's and the all-reduce's) loaded, here on the
// caller's thread (prepareDeviceAllReduce says why).
bool foldsOnDevice(const StagedCall& staged, const DeviceMergedAllReduce& call) {
  const DeviceCall& c = call.allReduce;
  if (!c.device || !device::isDeviceMemory(call.sendbuff) || !device::isDeviceMemory(c.recvbuff))
    return false;
  // On the buffers' device: the fold's kernel has no peer access to another.
  if (call.migrated.count > 0 && !device::isDeviceMemoryOf(call.migrated.data, staged.device()))
    return false;
  device::ScopedCudaContext current(staged.context());
  (void)prepareDeviceAllReduce(c.datatype, migrate::foldOp(c.op));
  return deviceReduceLoaded(c.datatype, migrate::foldOp(c.op)) &&
         deviceReduceLoaded(c.datatype, c.op);
}

// The staged calls' schedule of the migration broadcast and reduce, for
// their fallback.
spcclResult_t runOnChain(CollContext& ctx, const CollArgs& args) {
  return runDenseCollective(ctx, args, migrate::kMigrationTreeAlgorithm);
}

migrate::MigrationKind kindOf(const DeviceCall& call) {
  return call.type == CollType::Broadcast ? migrate::MigrationKind::Broadcast
                                          : migrate::MigrationKind::Reduce;
}

void recordResident(StagingProfile& profile, migrate::MigrationKind kind) {
  profile.recordDeviceResidentMigration(kind);
}

}  // namespace

spcclResult_t runDeviceMigrateRooted(spcclComm_t comm, StagedCall& staged, const CollArgs& args,
                                     const RootedCallNames& names, const CollSignature& signature,
                                     spcclRequest_t* request) {
  const spcclResult_t valid = validate(staged);
  if (valid != spcclSuccess) return rejectCall(comm, valid);
  DeviceCall call = deviceCallOf(comm, staged, args, names.call);
  call.rootArgument = names.argument;
  call.hostRun = runOnChain;
  // On one host every rank copies the straggler's buffer over IPC (and
  // dest reads every rank's): the pipelined chain of the staged path
  // (migrate/migration_schedules.h) spares a straggler's network link,
  // which the ranks of one host do not share.
  return finishCall(
      comm, runDeviceCall(
                comm, staged, signature,
                [call](CollContext& ctx, device::PeerAllocations& peers, bool* onDevices) {
                  return runDeviceCollective(ctx, call, peers, onDevices);
                },
                [kind = kindOf(call)](StagingProfile& p) { recordResident(p, kind); }, request));
}

spcclResult_t runDeviceMigrateAllReduce(spcclComm_t comm, StagedCall& staged, const char* name,
                                        const void* sendbuff, void* recvbuff, size_t count,
                                        const migrate::MigratedPart& migrated,
                                        spcclDataType_t datatype, spcclRedOp_t op,
                                        const CollSignature& signature, spcclRequest_t* request) {
  spcclResult_t res = validate(staged);
  if (res != spcclSuccess) return rejectCall(comm, res);
  // The folded all-reduce in place (sendbuff == recvbuff): the DeviceCall
  // whose offer the agreement reads, so deviceCallOf reserves its scratch.
  const CollArgs args = migrate::foldedAllReduceArgs(recvbuff, count, datatype, op);
  DeviceMergedAllReduce call{deviceCallOf(comm, staged, args, name), sendbuff, migrated};
  if (foldsOnDevice(staged, call))
    return finishCall(
        comm,
        runDeviceCall(
            comm, staged, signature,
            [call](CollContext& ctx, device::PeerAllocations& peers, bool* onDevices) {
              return migrate::deviceMergedAllReduce(ctx, call, peers, onDevices);
            },
            [](StagingProfile& p) { recordResident(p, migrate::MigrationKind::MergedAllReduce); },
            request));
  // Staged whole: the fold and the all-reduce's fallback on the host copies.
  // A scratch deviceCallOf reserved goes unused (it only grows: later
  // calls take it).
  res = staged.prepare();
  if (res != spcclSuccess) return rejectCall(comm, res);
  call.allReduce.device = false;
  call.allReduce.recvbuff = staged.hostView(recvbuff);
  call.allReduce.sendbuff = call.allReduce.recvbuff;
  call.sendbuff = staged.hostView(sendbuff);
  call.migrated.data = staged.hostView(migrated.data);
  auto body = [call, peers = devicePeersOf(comm)](CollContext& ctx) {
    bool onDevices = false;
    return migrate::deviceMergedAllReduce(ctx, call, *peers, &onDevices);
  };
  return finishCall(comm, request != nullptr
                              ? staged.runCollectiveQueued(signature, std::move(body), request)
                              : staged.runCollective(signature, std::move(body)));
}

spcclResult_t runDeviceMigrateExchange(spcclComm_t comm, StagedCall& staged, const char* name,
                                       bool rootSends, const void* sendbuff, void* recvbuff,
                                       size_t count, spcclDataType_t datatype, int root,
                                       const CollSignature& signature) {
  const spcclResult_t valid = validate(staged);
  if (valid != spcclSuccess) return rejectCall(comm, valid);
  const CollArgs args{.type = CollType::Migration,
                      .sendbuff = sendbuff,
                      .recvbuff = recvbuff,
                      .count = count,
                      .datatype = datatype,
                      .root = root};
  const DeviceCall call = deviceCallOf(comm, staged, args, name);
  const migrate::MigrationKind kind =
      rootSends ? migrate::MigrationKind::Scatter : migrate::MigrationKind::Gather;
  return finishCall(
      comm,
      runDeviceCall(
          comm, staged, signature,
          [call, rootSends](CollContext& ctx, device::PeerAllocations& peers, bool* onDevices) {
            return migrate::deviceScatterGather(ctx, call, rootSends, peers, onDevices);
          },
          [kind](StagingProfile& p) { recordResident(p, kind); }, nullptr));
}

}  // namespace spccl

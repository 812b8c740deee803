// The migration calls of device buffers on a communicator whose calls join
// the device path (joinsDeviceAllReduce, core/device_collective_call.h):
// the same agreement, schedules and fallback as the dense collectives
// (docs/gpu.md, "Migration calls of device buffers"), under the call's
// own Migration signature and root name, so mismatches fail as the staged
// calls' do.
//
// spcclMigrateBroadcast is the device-resident broadcast from the
// straggler, spcclMigrateReduce the device-resident reduce into dest,
// spcclMigrateAllReduce migrate/device_merged_all_reduce.h, spcclScatter
// and spcclGather migrate/device_scatter_gather.h. Every rank of
// such a communicator comes here, on host buffers too: a rank that cannot
// take the path makes every rank fall back in the same call.
#pragma once

#include "coll/root_agreement.h"
#include "core/staged_call.h"
#include "migrate/migration_schedules.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// The broadcast (args.type Broadcast, in place, root the straggler) or
// reduce (Reduce, root dest) of a migration call; names.argument names
// its root in a mismatch. `staged` holds the call's buffers, added, not
// prepared. Finished (finishCall or rejectCall on comm).
spcclResult_t runDeviceMigrateRooted(spcclComm_t comm, StagedCall& staged, const CollArgs& args,
                                     const RootedCallNames& names, const CollSignature& signature,
                                     spcclRequest_t* request);

// spcclMigrateAllReduce and spcclImigrateAllReduce. The device path where
// this rank's sendbuff, recvbuff and migrated (unless migrated.count is 0)
// are device memory and the kernels load; else the call is staged whole
// as before, and its body takes part in the agreement (making every rank
// fall back). Finished as above.
spcclResult_t runDeviceMigrateAllReduce(spcclComm_t comm, StagedCall& staged, const char* name,
                                        const void* sendbuff, void* recvbuff, size_t count,
                                        const migrate::MigratedPart& migrated,
                                        spcclDataType_t datatype, spcclRedOp_t op,
                                        const CollSignature& signature, spcclRequest_t* request);

// spcclScatter (rootSends) and spcclGather: migrate/device_scatter_gather.h.
// count: the block's elements. Finished as above.
spcclResult_t runDeviceMigrateExchange(spcclComm_t comm, StagedCall& staged, const char* name,
                                       bool rootSends, const void* sendbuff, void* recvbuff,
                                       size_t count, spcclDataType_t datatype, int root,
                                       const CollSignature& signature);

}  // namespace spccl

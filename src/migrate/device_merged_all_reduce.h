// The merged migration all-reduce (SEMI-migration, section IV-A, reduce
// merging; docs/algorithms.md 4) on the device-resident all-reduce
// (coll/device_all_reduce.h), for a communicator whose calls join the
// device path (docs/gpu.md, "Migration calls of device buffers"):
// 1. this rank's contribution, recvbuff = sendbuff with `migrated` folded
//    in by foldOp(op) at [migrated.offset, + migrated.count):
//    - on the device where sendbuff, recvbuff and migrated are device
//      memory (allReduce.device): copies and spccl's reduce kernel of two
//      inputs (sendbuff op migrated, as the CPU folds), on the
//      communicator's stream;
//    - else on the CPU (foldMigratedPart), on host memory or the call's
//      staged copies;
// 2. a barrier carrying each rank's status, so that a failed fold fails
//    the call on every rank, naming the rank;
// 3. the device-resident all-reduce of recvbuff in place. Its agreement
//    takes the device path only where every rank folded on the device;
//    otherwise every rank runs the CPU all-reduce (ctx.denseAlgorithm(),
//    as the staged call does), a rank with device buffers copying
//    recvbuff through host memory.
#pragma once

#include "coll/device_call.h"
#include "device/peer_allocations.h"
#include "migrate/migration_schedules.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::migrate {

struct DeviceMergedAllReduce {
  // The all-reduce of step 3: in place on recvbuff (sendbuff == recvbuff),
  // the call's op; .device says where step 1 runs.
  DeviceCall allReduce;
  const void* sendbuff = nullptr;  // the user's: the contribution before the fold
  MigratedPart migrated;
};

// The call on ctx. The calling thread has the buffers' CUDA context
// current where call.allReduce.device. *onDevices: whether the all-reduce
// took the device path.
spcclResult_t deviceMergedAllReduce(CollContext& ctx, const DeviceMergedAllReduce& call,
                                    device::PeerAllocations& peers, bool* onDevices);

}  // namespace spccl::migrate

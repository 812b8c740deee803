// How an all-reduce API call reaches the device-resident schedule
// (coll/device_all_reduce.h), without staging.
//
// Whether a call joins is decided from what every rank of a job shares,
// so that all ranks join the same calls: every rank on one host, the
// transport auto, shm or cuda_ipc, SPCCL_DEVICE_ALLREDUCE on (the job's
// setting), and a libspccl with the kernels in a process that has loaded
// the CUDA driver. A blocking all-reduce outside a group that joins then
// runs the schedule's agreement, on host buffers too: the ranks choose the
// device path only when every rank's buffers are device memory it can
// export, and the CPU all-reduce otherwise. A process without the driver
// never joins, so CPU-only jobs run as before; a job where only some
// processes loaded the driver fails its all-reduces at the engine's
// signature check, naming the mismatch.
#pragma once

#include "coll/collective.h"
#include "core/staged_call.h"
#include "spccl.h"

namespace spccl {

bool joinsDeviceAllReduce(spcclComm_t comm);

// `staged` holds the call's buffers (added and validated, not prepared).
spcclResult_t runDeviceAllReduceCall(spcclComm_t comm, StagedCall& staged, const CollArgs& args,
                                     const CollSignature& signature, const char* name);

}  // namespace spccl

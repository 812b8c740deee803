// The reduction kernel of the device-resident collectives
// (kernels/device_reduce, spccl's own fatbin loaded through the driver):
// out = inputs[0] op ... op inputs[n-1], left to right (rank order, so
// every rank that reduces a block gets the same bits), spcclAvg a sum and
// one division by the number of inputs, as the CPU path finishes it.
#pragma once

#include <cstddef>
#include <vector>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl {

// Whether this libspccl carries the kernels and the loaded driver can load
// them and open IPC handles: a rank without it joins but cannot take the
// device path (the call falls back on every rank).
bool deviceAllReduceAvailable();

// Loads the kernel for (datatype, op) in the calling thread's context, on
// the caller's thread, before the call is enqueued: cuModuleLoadData may
// wait for the device, and on the worker it would wait for the caller's
// stream, which the call holds. A failure here only makes the call fall
// back (the schedule looks again).
spcclResult_t prepareDeviceAllReduce(spcclDataType_t datatype, spcclRedOp_t op);

// Whether the kernel for (datatype, op) is loaded (a cached lookup after
// prepareDeviceAllReduce).
bool deviceReduceLoaded(spcclDataType_t datatype, spcclRedOp_t op);

// Whether launchDeviceReduce reads inputs[index] in its first launch,
// before anything is written to `out`. A later launch reads its inputs
// after the earlier ones wrote `out`: an input that `out` overlaps (in
// place) is then no longer the input (coll/device_in_place_input.h).
bool readInFirstLaunch(size_t index);

// The reduction on `stream`, in launches of at most kMaxInputs inputs,
// each after the first starting from out. `name`: the API call, for errors.
// A failed launch returns once the launches queued before it are done.
spcclResult_t launchDeviceReduce(const char* name, spcclDataType_t datatype, spcclRedOp_t op,
                                 const std::vector<device::CuDevicePtr>& inputs,
                                 device::CuDevicePtr out, size_t count, device::CuStream stream);

}  // namespace spccl

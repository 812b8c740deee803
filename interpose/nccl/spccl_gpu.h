// The seam between the interposer and spccl's GPU support (device memory
// and CUDA streams in every collective, spcclCommGetAsyncError,
// spcclCommCuDevice). The interposer is written against those calls; this
// file lets it build against a libspccl that does not have them yet, and
// needs no change when they arrive.
//
// Whether spccl.h declares them is found at compile time (spccl_gpu.cc,
// by overload resolution: no configure step). With them:
//  - replace mode passes device buffers and the caller's stream straight to
//    spccl (stream-ordered, no host-side synchronisation);
//  - ncclCommGetAsyncError asks spcclCommGetAsyncError, ncclCommCuDevice
//    spcclCommCuDevice.
// Without them, device buffers are refused in replace mode as before, the
// asynchronous error is the interposer's own sticky one, and the device is
// the one current when the communicator was made.
#pragma once

#include "spccl.h"

namespace spccl::nccl {

// Whether the linked spccl takes device memory and streams.
bool spcclTakesDeviceMemory();

// spcclCommGetAsyncError(comm, out); without it: *out = spcclSuccess.
spcclResult_t spcclAsyncErrorOf(spcclComm_t comm, spcclResult_t* out);

// spcclCommCuDevice(comm, device); without it: spcclInvalidUsage, *device
// untouched.
spcclResult_t spcclCuDeviceOf(spcclComm_t comm, int* device);

}  // namespace spccl::nccl

// spcclTokenTopkAllReduce / spcclTokenMaskAllReduce of a device tensor
// without staging it whole (docs/gpu.md, "Token all-reduces of device
// buffers"): the scores or the mask (small) are copied to the host, the
// selection and the agreement run on the host as for host memory
// (compress/token_allreduce.h), then only the kept rows are gathered on
// the GPU and copied to pinned host memory, all-reduced there by the same
// code as the host path, copied back and scattered, and the pruned rows
// zeroed on the GPU (compress/device_rows.h). With error feedback the
// residual's kept rows go the same way (a host residual's are packed by
// the CPU): the codec updates them on the host, the pruned rows' residual
// stays where it is, untouched as on the host path. Same result bits as
// the staged call, on every rank, so each rank chooses alone.
#pragma once

#include <memory>

#include "compress/token_allreduce.h"
#include "core/staged_call.h"
#include "spccl.h"

namespace spccl {

// Whether this rank runs `call` so: SPCCL_DEVICE_TOKENS=1, buff in device
// memory (after staged.validate; the residual, if any, anywhere), and the
// kernels (CUDA at build time, the driver's module and stream entry
// points). Otherwise the call is staged whole, as before.
bool deviceTokensApply(const StagedCall& staged, const compress::TokenCall& call);

// What the call takes that might wait for the device (its stream, the
// kernels' module, pinned memory sized for the rows it keeps; a device
// mask with no stream is copied here, after the legacy stream's work, to
// count them): taken on the caller's thread, before a host function holds
// the caller's stream.
struct DeviceTokenPlan;

// A failure here is the call's (rejectCall: nothing ran).
spcclResult_t prepareDeviceTokens(const StagedCall& staged, const compress::TokenCall& call,
                                  std::shared_ptr<DeviceTokenPlan>* out);

// Runs it at once (NULL stream: after the legacy stream's work) or in the
// stream's order (staged.runDirect); with a request, queued as a
// non-blocking call (staged.runDirectQueued). Not finishCall'ed. A device failure
// before the collective withdraws this rank from it; one inside it (the
// gather, the scatter) breaks the communicator, so that the peers fail at
// once, naming this rank, instead of at the deadline.
spcclResult_t runDeviceTokens(spcclComm_t comm, StagedCall& staged, const compress::TokenCall& call,
                              const std::shared_ptr<DeviceTokenPlan>& plan,
                              spcclRequest_t* request = nullptr);

}  // namespace spccl

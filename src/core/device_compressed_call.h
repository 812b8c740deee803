// spcclCompressedAllReduce of device buffers with the output decoded on
// the device (docs/gpu.md, "Compressed all-reduce of device buffers"):
// the input still goes to pinned host memory whole and is quantized and
// summed on the host by the same two-shot schedule, but the output is
// never staged: the codes that the schedule decodes (the owned chunk's sum
// and the peers' all-gathered chunks) are copied to the device and decoded
// there (compress/device_codecs.h), so only codes cross PCIe towards the
// device. Same result bits as the staged call, on every rank, so each rank
// chooses alone.
#pragma once

#include <memory>

#include "compress/compressed_allreduce.h"
#include "core/staged_call.h"
#include "spccl.h"

namespace spccl {

// Whether this rank runs `call` so: SPCCL_DEVICE_CODECS=1, sendbuff and
// recvbuff in device memory (after staged.validate), f32, the two-shot
// schedule, no residual, and the kernel (CUDA at build time, the driver's
// module and stream entry points). Otherwise the call is staged whole.
bool deviceCodecsApply(const StagedCall& staged, const compress::CompressedCall& call);

// What the call takes that might wait for the device (its stream, the
// kernel's module, the pinned input): taken on the caller's thread.
struct DeviceCodecsPlan;

// A failure here is the call's (rejectCall: nothing ran).
spcclResult_t prepareDeviceCodecs(const StagedCall& staged, const compress::CompressedCall& call,
                                  std::shared_ptr<DeviceCodecsPlan>* out);

// Runs it at once or in the stream's order (staged.runDirect); with a
// request, queued (staged.runDirectQueued). Not finishCall'ed. A failed
// input copy withdraws this rank before the collective; a failed decode
// inside it breaks the communicator, so that the peers fail at once,
// naming this rank, instead of at the deadline.
spcclResult_t runDeviceCodecs(spcclComm_t comm, StagedCall& staged,
                              const compress::CompressedCall& call,
                              const std::shared_ptr<DeviceCodecsPlan>& plan,
                              spcclRequest_t* request = nullptr);

}  // namespace spccl

// spcclCompressedAllReduce of device buffers with the codecs on the
// device (docs/gpu.md, "Compressed all-reduce of device buffers"): the
// two-shot schedule runs on the host as for host memory, but the peers'
// chunks are encoded on the device and only their encodings copied to the
// host; the owned chunk is summed on the device (the peers' codes of it
// copied there, decoded and added in the CPU's order), encoded there and
// only that encoding copied to the host, to be sent, or, where that
// crosses fewer bytes, copied to the host and summed there
// (compress/owned_sum_placement.h); the output is never
// staged: it is decoded on the device from the owned sum's codes there
// and from the peers' all-gathered codes, copied in
// (compress/device_codecs.h). The ring schedule
// runs its steps there too (compress/compressed_allreduce.h RingSteps):
// only codes cross, the running sum stays on the device. f32, f16 and bf16;
// a residual in device memory is updated there (error feedback), one in
// host memory stages the call whole. Same result bits as the staged call,
// on every rank, so each rank chooses alone.
#pragma once

#include <memory>

#include "compress/compressed_allreduce.h"
#include "core/staged_call.h"
#include "spccl.h"

namespace spccl {

// Whether this rank runs `call` so: SPCCL_DEVICE_CODECS=1, sendbuff and
// recvbuff in device memory (after staged.validate), either schedule, no
// residual or one in device memory, and the kernels (CUDA at
// build time, the driver's module and stream entry points). Otherwise the
// call is staged whole.
bool deviceCodecsApply(const StagedCall& staged, const compress::CompressedCall& call);

// What the call takes that might wait for the device (its stream, the
// kernel's module, the pinned staging of the encodings and, for the
// two-shot, of the peers' codes of an owned piece): taken on the caller's
// thread.
struct DeviceCodecsPlan;

// A failure here is the call's (rejectCall: nothing ran). comm: the
// call's (its size, this rank and its piece size cut the owned chunk).
spcclResult_t prepareDeviceCodecs(const StagedCall& staged, const compress::CompressedCall& call,
                                  spcclComm_t comm, std::shared_ptr<DeviceCodecsPlan>* out);

// Runs it at once or in the stream's order (staged.runDirect); with a
// request, queued (staged.runDirectQueued). Not finishCall'ed. A failed
// device step (all inside the collective) breaks the communicator, so that
// the peers fail at once, naming this rank, instead of at the deadline.
spcclResult_t runDeviceCodecs(spcclComm_t comm, StagedCall& staged,
                              const compress::CompressedCall& call,
                              const std::shared_ptr<DeviceCodecsPlan>& plan,
                              spcclRequest_t* request = nullptr);

}  // namespace spccl

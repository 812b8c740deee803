#include "core/device_compressed_call.h"

#include <string>

#include "base/check.h"
#include "base/knobs.h"
#include "compress/chunk_layout.h"
#include "compress/device_codecs.h"
#include "compress/owned_sum_placement.h"
#include "core/comm.h"
#include "device/memory_kind.h"
#include "device/pinned_pool.h"

namespace spccl {

using compress::CompressedCall;
using compress::DeviceCodecs;

struct DeviceCodecsPlan {
  device::CuStream stream = nullptr;
  // Where the encodings land (compress/device_codecs.h): the whole tensor's
  // codes, more than any chunk's.
  device::PinnedBuffer staging;
  // The two-shot's owned piece: its peers' codes, or the piece itself
  // where the host sums it (compress/owned_sum_placement.h).
  device::PinnedBuffer owned;
};

bool deviceCodecsApply(const StagedCall& staged, const CompressedCall& call) {
  // Cheapest first: host calls leave at the first test.
  return staged.hasDeviceMemory() && call.count > 0 && call.rows == nullptr &&
         knobInt("SPCCL_DEVICE_CODECS") != 0 && device::isDeviceMemory(call.sendbuff) &&
         device::isDeviceMemory(call.recvbuff) &&
         (call.residual == nullptr || device::isDeviceMemoryOf(call.residual, staged.device())) &&
         compress::deviceCodecsAvailable();
}

spcclResult_t prepareDeviceCodecs(const StagedCall& staged, const CompressedCall& call,
                                  spcclComm_t comm, std::shared_ptr<DeviceCodecsPlan>* out) {
  auto plan = std::make_shared<DeviceCodecsPlan>();
  device::ScopedCudaContext current(staged.context());
  SPCCL_CHECK(device::ownStream(call.name, &plan->stream));
  SPCCL_CHECK(DeviceCodecs::loadKernels());
  SPCCL_CHECK(
      device::acquirePinned(kernels::quantizedBytes(call.spec, call.count), &plan->staging));
  if (call.schedule != spcclCompressRing && comm->nranks > 1) {
    const compress::ChunkLayout layout{call.count, call.spec.blockSize, comm->nranks};
    SPCCL_CHECK(device::acquirePinned(
        compress::ownedSumStagingBytes(call, layout, comm->rank,
                                       comm->engine->settings().compressPieceBytes),
        &plan->owned));
  }
  *out = std::move(plan);
  return spcclSuccess;
}

spcclResult_t runDeviceCodecs(spcclComm_t comm, StagedCall& staged, const CompressedCall& call,
                              const std::shared_ptr<DeviceCodecsPlan>& plan,
                              spcclRequest_t* request) {
  auto body = [comm, call, plan]() -> spcclResult_t {
    compress::DeviceCodecBuffers buffers;
    buffers.type = call.type;
    buffers.in = call.sendbuff;
    buffers.out = call.recvbuff;
    buffers.residual = call.residual;
    buffers.staging = static_cast<unsigned char*>(plan->staging.data());
    buffers.stagingBytes = plan->staging.capacity();
    buffers.owned = static_cast<unsigned char*>(plan->owned.data());
    buffers.ownedBytes = plan->owned.capacity();
    DeviceCodecs codecs(call.name, plan->stream, call.spec, buffers);
    CompressedCall run = call;
    if (call.schedule == spcclCompressRing) {
      run.ring = &codecs;
    } else {
      // Neither buffer is the CPU's to read: the codecs reach them.
      run.sendbuff = nullptr;
      run.encoder = &codecs;
      run.decoder = &codecs;
    }
    const spcclResult_t ran = spccl::runCollective(
        *comm->engine, compress::signatureOf(run),
        [&run](CollContext& ctx) { return compress::runCompressedAllReduce(ctx, run); });
    if (ran != spcclSuccess && codecs.failed()) {
      // The peers are inside the collective, waiting for this rank's
      // chunks or pieces: breaking the communicator tells them now.
      const std::string why = threadLastError();
      if (!comm->engine->broken()) comm->engine->abort(ran, why);
      return failWith(ran, __FILE__, __LINE__, "%s", why.c_str());
    }
    SPCCL_CHECK(ran);
    comm->stagingProfile->recordDeviceCopies(DevicePart::kCodecs, codecs.bytesToHost(),
                                             codecs.bytesToDevice());
    return spcclSuccess;
  };
  return request != nullptr ? staged.runDirectQueued(std::move(body), request)
                            : staged.runDirect(std::move(body));
}

}  // namespace spccl

#include "core/device_token_call.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/knobs.h"
#include "compress/device_rows.h"
#include "core/comm.h"
#include "device/memory_kind.h"
#include "device/pinned_pool.h"

namespace spccl {

using compress::DeviceRows;
using compress::TokenCall;

// The call's pinned host memory: the packed kept rows (keep x hidden
// elements at most: the mask call's are counted at run time and fit in
// the tokens x hidden it may take), and the scores, mask or maskOut where
// they are device memory.
struct DeviceTokenPlan {
  device::CuStream stream = nullptr;
  device::PinnedBuffer packed;
  device::PinnedBuffer small;  // scores or mask, then maskOut
  bool scoresOnDevice = false;
  bool maskOnDevice = false;
  bool maskOutOnDevice = false;
};

namespace {

bool onDevice(const void* pointer) {
  return pointer != nullptr && device::locateBuffer(pointer).kind == device::MemoryKind::Device;
}

// The mover of compress/token_allreduce.h for a device tensor: the kept
// rows through `onDevice`, packed in the plan's pinned memory. Remembers
// whether the gather failed, which the caller must tell the peers.
class DeviceRowsMover : public compress::TokenRowsMover {
 public:
  DeviceRowsMover(DeviceRows& rows, void* packed, spcclPrunePolicy_t policy, size_t tokens)
      : rows_(rows), packed_(packed), policy_(policy), tokens_(tokens) {}

  spcclResult_t pack(std::span<const size_t> rows, void** packed) override {
    *packed = packed_;
    const spcclResult_t gathered = rows_.gather(rows, packed_);
    packFailed_ = gathered != spcclSuccess;
    return gathered;
  }

  spcclResult_t unpack(std::span<const size_t> rows, const unsigned char* mask) override {
    SPCCL_CHECK(rows_.scatter(rows, packed_));
    if (policy_ != spcclPruneZero) return spcclSuccess;
    std::vector<size_t> pruned;
    for (size_t t = 0; t < tokens_; ++t)
      if (mask[t] == 0) pruned.push_back(t);
    return rows_.zero(pruned);
  }

  // The gather failed: this rank's rows never reached the all-reduce that
  // its peers are in. (A failure in unpack, after it, is this rank's only.)
  bool packFailed() const { return packFailed_; }

 private:
  DeviceRows& rows_;
  void* packed_;
  spcclPrunePolicy_t policy_;
  size_t tokens_;
  bool packFailed_ = false;
};

// The scores or the mask where the CPU reads them; maskOut where the CPU
// writes it (copied to the device after the call).
spcclResult_t hostInputs(DeviceRows& rows, const DeviceTokenPlan& plan, TokenCall* run) {
  auto* small = static_cast<unsigned char*>(plan.small.data());
  if (run->isTopk() && plan.scoresOnDevice) {
    SPCCL_CHECK(
        rows.copyToHost(small, run->scores, run->tokens * sizeof(float), "the scores to the host"));
    run->scores = reinterpret_cast<const float*>(small);
  }
  if (!run->isTopk() && plan.maskOnDevice) {
    SPCCL_CHECK(rows.copyToHost(small, run->mask, run->tokens, "the mask to the host"));
    run->mask = small;
  }
  if (run->isTopk() && plan.maskOutOnDevice) run->maskOut = small + run->tokens * sizeof(float);
  return spcclSuccess;
}

}  // namespace

bool deviceTokensApply(const StagedCall& staged, const TokenCall& call) {
  const bool residual = call.compressed && call.compression.residual != nullptr;
  // Cheapest first: host calls leave at the first test.
  return staged.hasDeviceMemory() && call.count() > 0 && !residual &&
         knobInt("SPCCL_DEVICE_TOKENS") != 0 && onDevice(call.buff) &&
         compress::deviceRowsAvailable();
}

spcclResult_t prepareDeviceTokens(const StagedCall& staged, const TokenCall& call,
                                  std::shared_ptr<DeviceTokenPlan>* out) {
  auto plan = std::make_shared<DeviceTokenPlan>();
  device::ScopedCudaContext current(staged.context());
  SPCCL_CHECK(device::ownStream(call.name, &plan->stream));
  SPCCL_CHECK(DeviceRows::loadKernels());
  plan->scoresOnDevice = call.isTopk() && onDevice(call.scores);
  plan->maskOutOnDevice = call.isTopk() && onDevice(call.maskOut);
  plan->maskOnDevice = !call.isTopk() && onDevice(call.mask);
  // Top-k keeps `keep` rows; a mask call, the mask's (known on the host
  // only at run time when the mask is device memory): at most every row.
  const size_t rows = call.isTopk() ? call.keep : call.tokens;
  SPCCL_CHECK(device::acquirePinned(
      std::max<size_t>(rows * call.hidden * spcclTypeSize(call.type), 1), &plan->packed));
  SPCCL_CHECK(device::acquirePinned(call.tokens * (sizeof(float) + 1) + 1, &plan->small));
  *out = std::move(plan);
  return spcclSuccess;
}

spcclResult_t runDeviceTokens(spcclComm_t comm, StagedCall& staged, const TokenCall& call,
                              const std::shared_ptr<DeviceTokenPlan>& plan,
                              spcclRequest_t* request) {
  auto body = [comm, call, plan]() -> spcclResult_t {
    DeviceRows rows(call.name, plan->stream, call.buff, call.tokens,
                    call.hidden * spcclTypeSize(call.type));
    TokenCall run = call;
    // Nothing sent yet: a failure here withdraws this rank from the call,
    // so that its peers' side fails at once, naming it.
    if (const spcclResult_t copied = hostInputs(rows, *plan, &run); copied != spcclSuccess) {
      const std::string why = threadLastError();
      comm->engine->withdraw(copied, why);
      return failWith(copied, __FILE__, __LINE__, "%s", why.c_str());
    }
    DeviceRowsMover mover(rows, plan->packed.data(), call.prunePolicy, call.tokens);
    run.mover = &mover;
    const spcclResult_t ran = spccl::runCollective(
        *comm->engine, compress::signatureOf(run),
        [&run](CollContext& ctx) { return compress::runTokenAllReduce(ctx, run); });
    if (ran != spcclSuccess && mover.packFailed()) {
      // The peers are inside the all-reduce of the rows, waiting for this
      // rank's: breaking the communicator tells them now. A failed launch
      // or copy usually leaves the CUDA context unusable anyway.
      const std::string why = threadLastError();
      if (!comm->engine->broken()) comm->engine->abort(ran, why);
      return failWith(ran, __FILE__, __LINE__, "%s", why.c_str());
    }
    SPCCL_CHECK(ran);
    if (plan->maskOutOnDevice)
      SPCCL_CHECK(
          rows.copyToDevice(call.maskOut, run.maskOut, call.tokens, "maskOut to the device"));
    comm->stagingProfile->recordDeviceCopies(DevicePart::kTokens, rows.bytesToHost(),
                                             rows.bytesToDevice());
    return spcclSuccess;
  };
  return request != nullptr ? staged.runDirectQueued(std::move(body), request)
                            : staged.runDirect(std::move(body));
}

}  // namespace spccl

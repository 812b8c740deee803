#include "core/device_token_call.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/knobs.h"
#include "compress/device_rows.h"
#include "compress/token_rows.h"
#include "core/comm.h"
#include "device/memory_kind.h"
#include "device/pinned_pool.h"

namespace spccl {

using compress::DeviceRows;
using compress::TokenCall;

// The call's pinned host memory: the packed kept rows and, where the
// residual is device memory, their residual rows (keep x hidden elements
// and floats; a mask call's counted when the call is made where the mask
// is readable then, else tokens x hidden), and the scores, mask or maskOut
// where they are device memory.
struct DeviceTokenPlan {
  device::CuStream stream = nullptr;
  device::PinnedBuffer packed;
  device::PinnedBuffer packedResidual;
  device::PinnedBuffer small;  // scores or mask, then maskOut
  bool scoresOnDevice = false;
  bool maskOnDevice = false;
  bool maskOutOnDevice = false;
  bool residualOnDevice = false;
  bool maskCopied = false;       // the device mask is in `small` already
  size_t bytesToHostAtCall = 0;  // what that copy moved
};

namespace {

// `bytes` of host memory for packed rows: the plan's pinned buffer where
// they fit, else pageable memory (a host mask that, by the time the call
// runs in its stream's order, keeps more rows than when it was made).
void* packedRowsAt(const device::PinnedBuffer& pinned, size_t bytes,
                   std::vector<unsigned char>* pageable) {
  if (bytes <= pinned.capacity()) return pinned.data();
  pageable->resize(bytes);
  return pageable->data();
}

// The mover of compress/token_allreduce.h for a device tensor: the kept
// rows through `rows`, and the residual's with them (a device residual:
// DeviceRows::moveAlso, one indices upload and one synchronisation for
// both) or by the CPU (host residual), packed in the plan's pinned
// memory. The codec's error feedback then updates the packed residual on
// the host as for a host tensor; the pruned rows' residual is never
// touched (nor copied), as on the host. Remembers whether a gather
// failed, which the caller must tell the peers.
class DeviceRowsMover : public compress::TokenRowsMover {
 public:
  DeviceRowsMover(DeviceRows& rows, const DeviceTokenPlan& plan, const TokenCall& call)
      : rows_(rows), plan_(plan), call_(call) {}

  spcclResult_t pack(std::span<const size_t> rows, void** packed, float** packedResidual) override {
    packed_ = packedRowsAt(plan_.packed, rows.size() * call_.hidden * spcclTypeSize(call_.type),
                           &pageable_);
    *packed = packed_;
    const float* residual = call_.compressed ? call_.compression.residual : nullptr;
    if (residual != nullptr) {
      const size_t residualRowBytes = call_.hidden * sizeof(float);
      packedResidual_ = static_cast<float*>(
          packedRowsAt(plan_.packedResidual, rows.size() * residualRowBytes, &pageableResidual_));
      if (!plan_.residualOnDevice)
        compress::gatherRows(residual, rows, residualRowBytes, packedResidual_);
    }
    *packedResidual = packedResidual_;
    const spcclResult_t gathered =
        rows_.gather(rows, packed_, plan_.residualOnDevice ? packedResidual_ : nullptr);
    packFailed_ = gathered != spcclSuccess;
    return gathered;
  }

  spcclResult_t unpack(std::span<const size_t> rows, const unsigned char* mask) override {
    SPCCL_CHECK(rows_.scatter(rows, packed_, plan_.residualOnDevice ? packedResidual_ : nullptr));
    if (packedResidual_ != nullptr && !plan_.residualOnDevice)
      compress::scatterRows(packedResidual_, rows, call_.hidden * sizeof(float),
                            call_.compression.residual);
    if (call_.prunePolicy != spcclPruneZero) return spcclSuccess;
    std::vector<size_t> pruned;
    for (size_t t = 0; t < call_.tokens; ++t)
      if (mask[t] == 0) pruned.push_back(t);
    return rows_.zero(pruned);
  }

  // A gather failed: this rank's rows never reached the all-reduce that
  // its peers are in. (A failure in unpack, after it, is this rank's only.)
  bool packFailed() const { return packFailed_; }

 private:
  DeviceRows& rows_;
  const DeviceTokenPlan& plan_;
  const TokenCall& call_;
  void* packed_ = nullptr;
  float* packedResidual_ = nullptr;
  std::vector<unsigned char> pageable_, pageableResidual_;
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
    if (!plan.maskCopied)
      SPCCL_CHECK(rows.copyToHost(small, run->mask, run->tokens, "the mask to the host"));
    run->mask = small;
  }
  if (run->isTopk() && plan.maskOutOnDevice) run->maskOut = small + run->tokens * sizeof(float);
  return spcclSuccess;
}

// The rows the call will keep at most, for its pinned memory: top-k's
// keep; a mask call's mask counted where it can be read now: host memory,
// or device memory when the call waits for the legacy stream anyway (no
// stream: copied to the plan now, after that wait, instead of in the
// call). A device mask on a stream is known only in the stream's order:
// every row (counting it now would wait for the stream).
spcclResult_t rowsAtMost(const StagedCall& staged, const TokenCall& call, DeviceTokenPlan* plan,
                         size_t* rows) {
  *rows = call.tokens;
  if (call.isTopk()) {
    *rows = call.keep;
    return spcclSuccess;
  }
  const unsigned char* mask = call.mask;
  if (plan->maskOnDevice) {
    if (staged.hasStream()) return spcclSuccess;
    const device::CuResult synced = device::cudaDriver()->streamSynchronize(nullptr);
    if (synced != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: waiting for the work queued before the call: %s",
                        call.name, device::describeCuError("cuStreamSynchronize", synced).c_str());
    DeviceRows copier(call.name, plan->stream, call.buff, call.tokens, 0, "mask");
    SPCCL_CHECK(
        copier.copyToHost(plan->small.data(), call.mask, call.tokens, "the mask to the host"));
    plan->maskCopied = true;
    plan->bytesToHostAtCall = copier.bytesToHost();
    mask = static_cast<const unsigned char*>(plan->small.data());
  }
  *rows = static_cast<size_t>(
      std::count_if(mask, mask + call.tokens, [](unsigned char m) { return m != 0; }));
  return spcclSuccess;
}

// A residual, scores, mask or maskOut in device memory of another device
// than the buffers': the plan's kernels have no peer access to it, so the
// call takes the staged path.
bool onAnotherDevice(const StagedCall& staged, const TokenCall& call) {
  const int device = staged.device();
  const float* residual = call.compressed ? call.compression.residual : nullptr;
  for (const void* p :
       {static_cast<const void*>(residual), static_cast<const void*>(call.scores),
        static_cast<const void*>(call.maskOut), static_cast<const void*>(call.mask)})
    if (device::onAnotherDevice(p, device)) return true;
  return false;
}

}  // namespace

bool deviceTokensApply(const StagedCall& staged, const TokenCall& call) {
  // Cheapest first: host calls leave at the first test.
  return staged.hasDeviceMemory() && call.count() > 0 && knobInt("SPCCL_DEVICE_TOKENS") != 0 &&
         device::isDeviceMemory(call.buff) && !onAnotherDevice(staged, call) &&
         compress::deviceRowsAvailable();
}

spcclResult_t prepareDeviceTokens(const StagedCall& staged, const TokenCall& call,
                                  std::shared_ptr<DeviceTokenPlan>* out) {
  auto plan = std::make_shared<DeviceTokenPlan>();
  device::ScopedCudaContext current(staged.context());
  SPCCL_CHECK(device::ownStream(call.name, &plan->stream));
  SPCCL_CHECK(DeviceRows::loadKernels());
  plan->scoresOnDevice = call.isTopk() && device::isDeviceMemory(call.scores);
  plan->maskOutOnDevice = call.isTopk() && device::isDeviceMemory(call.maskOut);
  plan->maskOnDevice = !call.isTopk() && device::isDeviceMemory(call.mask);
  plan->residualOnDevice = call.compressed && device::isDeviceMemory(call.compression.residual);
  SPCCL_CHECK(device::acquirePinned(call.tokens * (sizeof(float) + 1) + 1, &plan->small));
  size_t rows = 0;
  SPCCL_CHECK(rowsAtMost(staged, call, plan.get(), &rows));
  SPCCL_CHECK(device::acquirePinned(
      std::max<size_t>(rows * call.hidden * spcclTypeSize(call.type), 1), &plan->packed));
  if (plan->residualOnDevice)
    SPCCL_CHECK(device::acquirePinned(std::max<size_t>(rows * call.hidden * sizeof(float), 1),
                                      &plan->packedResidual));
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
    if (plan->residualOnDevice)
      rows.moveAlso(call.compression.residual, call.hidden * sizeof(float), "cfg->residual");
    DeviceRowsMover mover(rows, *plan, call);
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
    comm->stagingProfile->recordDeviceCopies(
        DevicePart::kTokens, plan->bytesToHostAtCall + rows.bytesToHost(), rows.bytesToDevice());
    return spcclSuccess;
  };
  return request != nullptr ? staged.runDirectQueued(std::move(body), request)
                            : staged.runDirect(std::move(body));
}

}  // namespace spccl

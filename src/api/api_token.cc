// API: token top-k and token mask all-reduces (AccTFM section 4.3.1; docs/algorithms.md
// section 3), blocking and non-blocking. Arguments are validated here with
// messages that name the argument; runTokenAllReduce gets only valid calls.
#include <optional>

#include "api/api_guard.h"
#include "api/arguments.h"
#include "api/compression_arguments.h"
#include "base/check.h"
#include "compress/token_allreduce.h"
#include "core/comm.h"
#include "core/device_token_call.h"
#include "core/staged_call.h"
#include "spccl.h"

using namespace spccl;
using spccl::compress::TokenCall;

namespace {

TokenCall shapedCall(const char* name, void* buff, size_t tokens, size_t hidden,
                     spcclDataType_t datatype, spcclRedOp_t op, spcclPrunePolicy_t prunePolicy) {
  TokenCall call;
  call.name = name;
  call.buff = buff;
  call.tokens = tokens;
  call.hidden = hidden;
  call.type = datatype;
  call.op = op;
  call.prunePolicy = prunePolicy;
  return call;
}

// What both calls share: shape, type, op, buff, policy and cfg (NULL means
// the kept rows are all-reduced exactly).
spcclResult_t checkTokenCall(spcclComm_t comm, const spcclCompression* cfg, TokenCall* call) {
  const char* name = call->name;
  size_t count = 0;
  if (__builtin_mul_overflow(call->tokens, call->hidden, &count))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: tokens %zu x hidden %zu overflows", name,
                      call->tokens, call->hidden);
  SPCCL_CHECK(compress::checkCommAndCount(name, comm, count));
  SPCCL_CHECK(compress::checkCompressibleTypeAndOp(name, call->type, call->op));
  SPCCL_CHECK(checkBuffer(name, "buff", call->buff, count));
  SPCCL_CHECK(checkEnum(name, "prunePolicy", call->prunePolicy, spcclNumPrunePolicies,
                        "spcclPrunePolicy_t"));
  call->compressed = cfg != nullptr;
  if (!call->compressed) return spcclSuccess;
  call->compression.name = name;
  call->compression.type = call->type;
  call->compression.op = call->op;
  return compress::resolveCompression(cfg, &call->compression);
}

spcclResult_t prepareTopk(const char* name, void* buff, const float* scores, size_t tokens,
                          size_t hidden, spcclDataType_t datatype, spcclRedOp_t op, size_t keep,
                          const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                          unsigned char* maskOut, spcclComm_t comm, TokenCall* call) {
  clearThreadLastError();
  *call = shapedCall(name, buff, tokens, hidden, datatype, op, prunePolicy);
  call->scores = scores;
  call->keep = keep;
  call->maskOut = maskOut;
  SPCCL_CHECK(checkTokenCall(comm, cfg, call));
  if (keep > tokens)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: keep %zu exceeds tokens %zu", name, keep, tokens);
  return checkBuffer(name, "scores", scores, tokens);
}

spcclResult_t prepareMask(const char* name, void* buff, const unsigned char* mask, size_t tokens,
                          size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                          const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                          spcclComm_t comm, TokenCall* call) {
  clearThreadLastError();
  *call = shapedCall(name, buff, tokens, hidden, datatype, op, prunePolicy);
  SPCCL_CHECK(checkTokenCall(comm, cfg, call));
  SPCCL_CHECK(checkBuffer(name, "mask", mask, tokens));
  // A non-null pointer marks the mask call even with zero tokens.
  static const unsigned char kNoTokens = 0;
  call->mask = mask != nullptr ? mask : &kNoTokens;
  return spcclSuccess;
}

// buff, the scores or the mask, maskOut and the residual, named for the
// staging's errors (staged.prepare: where the CPU reaches them).
void addBuffers(const TokenCall& call, StagedCall& staged) {
  const size_t rowsBytes = call.tokens * call.hidden * spcclTypeSize(call.type);
  staged.add("buff", call.buff, rowsBytes, device::Access::ReadWrite);
  if (call.isTopk()) {
    staged.add("scores", call.scores, call.tokens * sizeof(float), device::Access::Read);
    staged.add("maskOut", call.maskOut, call.tokens, device::Access::Write);
  } else {
    staged.add("mask", call.mask, call.tokens, device::Access::Read);
  }
  if (call.compressed)
    staged.add("cfg->residual", call.compression.residual,
               call.tokens * call.hidden * sizeof(float), device::Access::ReadWrite);
}

// The buffers added and validated; then a device tensor whose kept rows
// can move on the device runs so (core/device_token_call.h): its result.
// nullopt: the call is to be staged whole (*prepared, if a success, says
// it may).
std::optional<spcclResult_t> runWithRowsOnDevice(spcclComm_t comm, spcclResult_t* prepared,
                                                 StagedCall& staged, const TokenCall& call,
                                                 spcclRequest_t* request) {
  if (*prepared == spcclSuccess) {
    addBuffers(call, staged);
    *prepared = staged.validate();
  }
  if (*prepared != spcclSuccess || !deviceTokensApply(staged, call)) return std::nullopt;
  std::shared_ptr<DeviceTokenPlan> plan;
  const spcclResult_t planned = prepareDeviceTokens(staged, call, &plan);
  if (planned != spcclSuccess) return rejectCall(comm, planned);
  return finishCall(comm, runDeviceTokens(comm, staged, call, plan, request));
}

TokenCall onHost(const StagedCall& staged, TokenCall call) {
  call.buff = staged.hostView(call.buff);
  if (call.isTopk()) {
    call.scores = static_cast<const float*>(staged.hostView(call.scores));
    call.maskOut = static_cast<unsigned char*>(staged.hostView(call.maskOut));
  } else {
    call.mask = static_cast<const unsigned char*>(staged.hostView(call.mask));
  }
  if (call.compressed)
    call.compression.residual = static_cast<float*>(staged.hostView(call.compression.residual));
  return call;
}

// The call moved on the device or staged: blocking on `stream` where
// request is NULL, else queued into *request (the migration calls' rule,
// api/migration_call.cc).
spcclResult_t runChecked(spcclComm_t comm, spcclResult_t prepared, const TokenCall& call,
                         void* stream, spcclRequest_t* request) {
  StagedCall staged(comm, call.name, stream);
  if (auto done = runWithRowsOnDevice(comm, &prepared, staged, call, request)) return *done;
  if (prepared == spcclSuccess) prepared = staged.prepare();
  if (prepared != spcclSuccess) return rejectCall(comm, prepared);
  const TokenCall host = onHost(staged, call);
  return finishCall(
      comm,
      staged.runCollectiveOrQueue(
          compress::signatureOf(host),
          [host](CollContext& ctx) { return compress::runTokenAllReduce(ctx, host); }, request));
}

// The non-blocking forms: a NULL request is the caller's error, never a
// blocking call.
spcclResult_t runAsyncChecked(spcclComm_t comm, spcclResult_t prepared, const TokenCall& call,
                              spcclRequest_t* request) {
  if (prepared == spcclSuccess) prepared = checkNotNull(call.name, "request", request);
  return runChecked(comm, prepared, call, nullptr, request);
}

}  // namespace

extern "C" {

spcclResult_t spcclTokenTopkAllReduce(void* buff, const float* scores, size_t tokens, size_t hidden,
                                      spcclDataType_t datatype, spcclRedOp_t op, size_t keep,
                                      const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                      unsigned char* maskOut, spcclComm_t comm, void* stream) {
  return guardCommApi("spcclTokenTopkAllReduce", comm, [&]() -> spcclResult_t {
    TokenCall call;
    const spcclResult_t res =
        prepareTopk("spcclTokenTopkAllReduce", buff, scores, tokens, hidden, datatype, op, keep,
                    cfg, prunePolicy, maskOut, comm, &call);
    return runChecked(comm, res, call, stream, nullptr);
  });
}

spcclResult_t spcclTokenMaskAllReduce(void* buff, const unsigned char* mask, size_t tokens,
                                      size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                      const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                      spcclComm_t comm, void* stream) {
  return guardCommApi("spcclTokenMaskAllReduce", comm, [&]() -> spcclResult_t {
    TokenCall call;
    const spcclResult_t res = prepareMask("spcclTokenMaskAllReduce", buff, mask, tokens, hidden,
                                          datatype, op, cfg, prunePolicy, comm, &call);
    return runChecked(comm, res, call, stream, nullptr);
  });
}

spcclResult_t spcclItokenTopkAllReduce(void* buff, const float* scores, size_t tokens,
                                       size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                       size_t keep, const spcclCompression* cfg,
                                       spcclPrunePolicy_t prunePolicy, unsigned char* maskOut,
                                       spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclItokenTopkAllReduce", comm, [&]() -> spcclResult_t {
    TokenCall call;
    const spcclResult_t res =
        prepareTopk("spcclItokenTopkAllReduce", buff, scores, tokens, hidden, datatype, op, keep,
                    cfg, prunePolicy, maskOut, comm, &call);
    return runAsyncChecked(comm, res, call, request);
  });
}

spcclResult_t spcclItokenMaskAllReduce(void* buff, const unsigned char* mask, size_t tokens,
                                       size_t hidden, spcclDataType_t datatype, spcclRedOp_t op,
                                       const spcclCompression* cfg, spcclPrunePolicy_t prunePolicy,
                                       spcclComm_t comm, spcclRequest_t* request) {
  return guardCommApi("spcclItokenMaskAllReduce", comm, [&]() -> spcclResult_t {
    TokenCall call;
    const spcclResult_t res = prepareMask("spcclItokenMaskAllReduce", buff, mask, tokens, hidden,
                                          datatype, op, cfg, prunePolicy, comm, &call);
    return runAsyncChecked(comm, res, call, request);
  });
}

}  // extern "C"

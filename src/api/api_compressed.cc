// API: compressed all-reduce (docs/algorithms.md 3), blocking and
// non-blocking. Arguments and the versioned cfg are validated here, with
// messages that name the argument; the schedules receive only valid calls.
#include <optional>

#include "api/api_guard.h"
#include "api/arguments.h"
#include "api/compression_arguments.h"
#include "base/check.h"
#include "compress/compressed_allreduce.h"
#include "core/comm.h"
#include "core/device_compressed_call.h"
#include "core/staged_call.h"
#include "spccl.h"

using namespace spccl;
using spccl::compress::CompressedCall;

namespace {

spcclResult_t checkCall(spcclComm_t comm, const CompressedCall& call) {
  SPCCL_CHECK(compress::checkCommAndCount(call.name, comm, call.count));
  SPCCL_CHECK(compress::checkCompressibleTypeAndOp(call.name, call.type, call.op));
  return checkSendAndRecv(call.name, call.sendbuff, call.recvbuff, call.count);
}

spcclResult_t prepare(const char* name, const void* sendbuff, void* recvbuff, size_t count,
                      spcclDataType_t datatype, spcclRedOp_t op, const spcclCompression* cfg,
                      spcclComm_t comm, CompressedCall* call) {
  clearThreadLastError();
  call->name = name;
  call->sendbuff = sendbuff;
  call->recvbuff = recvbuff;
  call->count = count;
  call->type = datatype;
  call->op = op;
  SPCCL_CHECK(checkCall(comm, *call));
  return compress::resolveCompression(cfg, call);
}

spcclResult_t addBuffers(const CompressedCall& call, StagedCall& staged) {
  const size_t bytes = call.count * spcclTypeSize(call.type);
  staged.add("sendbuff", call.sendbuff, bytes, device::Access::Read);
  staged.add("recvbuff", call.recvbuff, bytes, device::Access::Write);
  staged.add("cfg->residual", call.residual, call.count * sizeof(float), device::Access::ReadWrite);
  SPCCL_CHECK(staged.requireSameKind("sendbuff", "recvbuff"));
  return staged.validate();
}

// The buffers added and validated; then device buffers whose output can
// be decoded on the device run so (core/device_compressed_call.h): its
// result. nullopt: the call is to be staged whole (*res, if a success,
// says it may).
std::optional<spcclResult_t> runWithCodecsOnDevice(spcclComm_t comm, spcclResult_t* res,
                                                   StagedCall& staged, const CompressedCall& call,
                                                   spcclRequest_t* request) {
  if (*res == spcclSuccess) *res = addBuffers(call, staged);
  if (*res != spcclSuccess || !deviceCodecsApply(staged, call)) return std::nullopt;
  std::shared_ptr<DeviceCodecsPlan> plan;
  const spcclResult_t planned = prepareDeviceCodecs(staged, call, comm, &plan);
  if (planned != spcclSuccess) return rejectCall(comm, planned);
  return finishCall(comm, runDeviceCodecs(comm, staged, call, plan, request));
}

CompressedCall onHost(const StagedCall& staged, CompressedCall call) {
  call.sendbuff = staged.hostView(call.sendbuff);
  call.recvbuff = staged.hostView(call.recvbuff);
  call.residual = static_cast<float*>(staged.hostView(call.residual));
  return call;
}

// The prepared call moved on the device or staged: blocking on `stream`
// where request is NULL, else queued into *request (as api_token.cc's
// runChecked).
spcclResult_t runChecked(spcclComm_t comm, spcclResult_t prepared, const CompressedCall& call,
                         void* stream, spcclRequest_t* request) {
  StagedCall staged(comm, call.name, stream);
  if (auto done = runWithCodecsOnDevice(comm, &prepared, staged, call, request)) return *done;
  if (prepared == spcclSuccess) prepared = staged.prepare();
  if (prepared != spcclSuccess) return rejectCall(comm, prepared);
  const CompressedCall host = onHost(staged, call);
  return finishCall(
      comm, staged.runCollectiveOrQueue(
                compress::signatureOf(host),
                [host](CollContext& ctx) { return compress::runCompressedAllReduce(ctx, host); },
                request));
}

}  // namespace

extern "C" {

spcclResult_t spcclCompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       spcclDataType_t datatype, spcclRedOp_t op,
                                       const spcclCompression* cfg, spcclComm_t comm,
                                       void* stream) {
  return guardCommApi("spcclCompressedAllReduce", comm, [&]() -> spcclResult_t {
    CompressedCall call;
    spcclResult_t res = prepare("spcclCompressedAllReduce", sendbuff, recvbuff, count, datatype, op,
                                cfg, comm, &call);
    return runChecked(comm, res, call, stream, nullptr);
  });
}

spcclResult_t spcclIcompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        spcclDataType_t datatype, spcclRedOp_t op,
                                        const spcclCompression* cfg, spcclComm_t comm,
                                        spcclRequest_t* request) {
  return guardCommApi("spcclIcompressedAllReduce", comm, [&]() -> spcclResult_t {
    CompressedCall call;
    spcclResult_t res = prepare("spcclIcompressedAllReduce", sendbuff, recvbuff, count, datatype,
                                op, cfg, comm, &call);
    if (res == spcclSuccess) res = checkNotNull(call.name, "request", request);
    // A NULL request is the caller's error, never a blocking call.
    return runChecked(comm, res, call, nullptr, request);
  });
}

}  // extern "C"

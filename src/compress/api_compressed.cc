// API: compressed all-reduce (SPEC.md section 3), blocking and
// non-blocking. Arguments and the versioned cfg are validated here, with
// messages that name the argument; the schedules receive only valid calls.
#include <cstddef>
#include <limits>

#include "compress/compressed_allreduce.h"
#include "core/check.h"
#include "core/enum_args.h"
#include "core/comm.h"
#include "spccl.h"

using namespace spccl;
using spccl::compress::CompressedCall;

namespace {

spcclResult_t finish(spcclComm_t comm, spcclResult_t result) {
  if (result != spcclSuccess && comm != nullptr) comm->lastError = threadLastError();
  return result;
}


// Fields past the caller's size keep their defaults (an older, smaller
// struct), as spcclConfig_t and spcclSparseOptions_t.
spcclResult_t resolveCompression(const spcclCompression* cfg, CompressedCall* call) {
  const char* name = call->name;
  if (cfg == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: cfg is NULL", name);
  const size_t header = offsetof(spcclCompression, version) + sizeof(cfg->version);
  if (cfg->size < header)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: cfg->size %zu is too small; initialise cfg with "
                      "SPCCL_COMPRESSION_INITIALIZER",
                      name, cfg->size);
  if (cfg->magic != SPCCL_COMPRESSION_MAGIC)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: cfg->magic 0x%08x is wrong; initialise cfg with "
                      "SPCCL_COMPRESSION_INITIALIZER",
                      name, cfg->magic);
  auto has = [cfg](size_t offset, size_t bytes) { return offset + bytes <= cfg->size; };
  call->spec = kernels::QuantizerSpec{kernels::Codec::Piecewise, 4, SPCCL_COMPRESSION_DEFAULT_BLOCK};
  if (has(offsetof(spcclCompression, codec), sizeof(cfg->codec))) {
    if (!validEnum(cfg->codec, spcclNumCodecs))
      return SPCCL_FAIL(spcclInvalidArgument, "%s: cfg->codec %d is not a valid spcclCodec_t", name,
                        rawEnumValue(cfg->codec));
    call->spec.codec =
        cfg->codec == spcclCodecLinear ? kernels::Codec::Linear : kernels::Codec::Piecewise;
  }
  if (has(offsetof(spcclCompression, bits), sizeof(cfg->bits))) {
    if (cfg->bits < kernels::kMinQuantizerBits || cfg->bits > kernels::kMaxQuantizerBits)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: cfg->bits %d is outside %d..%d (total bits per element, sign "
                        "included)",
                        name, cfg->bits, kernels::kMinQuantizerBits, kernels::kMaxQuantizerBits);
    call->spec.bits = cfg->bits;
  }
  if (has(offsetof(spcclCompression, blockSize), sizeof(cfg->blockSize)) && cfg->blockSize != 0)
    call->spec.blockSize = cfg->blockSize;
  if (has(offsetof(spcclCompression, schedule), sizeof(cfg->schedule))) {
    if (!validEnum(cfg->schedule, spcclNumCompressSchedules))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: cfg->schedule %d is not a valid spcclCompressSchedule_t", name,
                        rawEnumValue(cfg->schedule));
    call->schedule = cfg->schedule;
  }
  if (has(offsetof(spcclCompression, residual), sizeof(cfg->residual))) call->residual = cfg->residual;
  return spcclSuccess;
}

spcclResult_t checkCall(spcclComm_t comm, const CompressedCall& call) {
  const char* name = call.name;
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: comm is NULL", name);
  if (!validEnum(call.type, spcclNumTypes))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: datatype %d is not a valid spcclDataType_t", name,
                      static_cast<int>(call.type));
  if (call.type != spcclFloat32 && call.type != spcclFloat16 && call.type != spcclBfloat16)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: datatype %s is not supported: compression takes float32, float16 and "
                      "bfloat16",
                      name, spcclTypeName(call.type));
  if (!validEnum(call.op, spcclNumOps))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: op %d is not a valid spcclRedOp_t", name,
                      static_cast<int>(call.op));
  if (call.op != spcclSum && call.op != spcclAvg)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: op %s is not supported: the compressed all-reduce sums (spcclSum, "
                      "spcclAvg)",
                      name, spcclOpName(call.op));
  size_t bytes = 0;
  if (__builtin_mul_overflow(call.count, sizeof(float), &bytes) ||
      bytes > static_cast<size_t>(std::numeric_limits<ssize_t>::max()))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: count %zu overflows the addressable size", name,
                      call.count);
  if (call.count > 0 && call.sendbuff == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: sendbuff is NULL", name);
  if (call.count > 0 && call.recvbuff == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: recvbuff is NULL", name);
  return spcclSuccess;
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
  return resolveCompression(cfg, call);
}

}  // namespace

extern "C" {

spcclResult_t spcclCompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       spcclDataType_t datatype, spcclRedOp_t op,
                                       const spcclCompression* cfg, spcclComm_t comm,
                                       void* stream) {
  CompressedCall call;
  spcclResult_t res = prepare("spcclCompressedAllReduce", sendbuff, recvbuff, count, datatype, op,
                              cfg, comm, &call);
  if (res == spcclSuccess && stream != nullptr)
    res = SPCCL_FAIL(spcclInvalidArgument,
                     "%s: stream must be NULL (host buffers); device memory is not supported yet",
                     call.name);
  if (res != spcclSuccess) return finish(comm, res);
  return finish(comm, runBlocking(comm, [&] { return compress::runCompressedAllReduce(comm, call); }));
}

spcclResult_t spcclIcompressedAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        spcclDataType_t datatype, spcclRedOp_t op,
                                        const spcclCompression* cfg, spcclComm_t comm,
                                        spcclRequest_t* request) {
  CompressedCall call;
  spcclResult_t res = prepare("spcclIcompressedAllReduce", sendbuff, recvbuff, count, datatype,
                              op, cfg, comm, &call);
  if (res == spcclSuccess && request == nullptr)
    res = SPCCL_FAIL(spcclInvalidArgument, "%s: request is NULL", call.name);
  if (res != spcclSuccess) return finish(comm, res);
  return runAsync(comm, [comm, call] { return compress::runCompressedAllReduce(comm, call); },
                  request);
}

}  // extern "C"

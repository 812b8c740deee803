#include "api/compression_arguments.h"

#include <cstddef>
#include <limits>

#include "base/check.h"
#include "base/enum_args.h"

namespace spccl::compress {

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
  call->spec =
      kernels::QuantizerSpec{kernels::Codec::Piecewise, 4, SPCCL_COMPRESSION_DEFAULT_BLOCK};
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
  if (has(offsetof(spcclCompression, residual), sizeof(cfg->residual)))
    call->residual = cfg->residual;
  return spcclSuccess;
}

spcclResult_t checkCompressibleTypeAndOp(const char* name, spcclDataType_t type, spcclRedOp_t op) {
  if (!validEnum(type, spcclNumTypes))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: datatype %d is not a valid spcclDataType_t", name,
                      static_cast<int>(type));
  if (type != spcclFloat32 && type != spcclFloat16 && type != spcclBfloat16)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: datatype %s is not supported: compression takes float32, float16 and "
                      "bfloat16",
                      name, spcclTypeName(type));
  if (!validEnum(op, spcclNumOps))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: op %d is not a valid spcclRedOp_t", name,
                      static_cast<int>(op));
  if (op != spcclSum && op != spcclAvg)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: op %s is not supported: the compressed all-reduce sums (spcclSum, "
                      "spcclAvg)",
                      name, spcclOpName(op));
  return spcclSuccess;
}

spcclResult_t checkCommAndCount(const char* name, spcclComm_t comm, size_t count) {
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: comm is NULL", name);
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, sizeof(float), &bytes) ||
      bytes > static_cast<size_t>(std::numeric_limits<ssize_t>::max()))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: count %zu overflows the addressable size", name,
                      count);
  return spcclSuccess;
}

}  // namespace spccl::compress

#include "api/compression_arguments.h"

#include "api/arguments.h"
#include "base/check.h"
#include "base/versioned_struct.h"

namespace spccl::compress {

spcclResult_t resolveCompression(const spcclCompression* cfg, CompressedCall* call) {
  const char* name = call->name;
  SPCCL_CHECK(checkNotNull(name, "cfg", cfg));
  const VersionedStruct<spcclCompression> in(
      *cfg, {name, "cfg->size", "cfg->magic", "cfg", "SPCCL_COMPRESSION_INITIALIZER"});
  SPCCL_CHECK(in.checkHeader(SPCCL_COMPRESSION_MAGIC));
  call->spec =
      kernels::QuantizerSpec{kernels::Codec::Piecewise, 4, SPCCL_COMPRESSION_DEFAULT_BLOCK};
  if (in.has(&spcclCompression::codec)) {
    SPCCL_CHECK(checkEnum(name, "cfg->codec", cfg->codec, spcclNumCodecs, "spcclCodec_t"));
    call->spec.codec =
        cfg->codec == spcclCodecLinear ? kernels::Codec::Linear : kernels::Codec::Piecewise;
  }
  if (in.has(&spcclCompression::bits)) {
    if (cfg->bits < kernels::kMinQuantizerBits || cfg->bits > kernels::kMaxQuantizerBits)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: cfg->bits %d is outside %d..%d (total bits per element, sign "
                        "included)",
                        name, cfg->bits, kernels::kMinQuantizerBits, kernels::kMaxQuantizerBits);
    call->spec.bits = cfg->bits;
  }
  if (in.has(&spcclCompression::blockSize) && cfg->blockSize != 0)
    call->spec.blockSize = cfg->blockSize;
  if (in.has(&spcclCompression::schedule)) {
    SPCCL_CHECK(checkEnum(name, "cfg->schedule", cfg->schedule, spcclNumCompressSchedules,
                          "spcclCompressSchedule_t"));
    call->schedule = cfg->schedule;
  }
  if (in.has(&spcclCompression::residual)) call->residual = cfg->residual;
  return spcclSuccess;
}

spcclResult_t checkCompressibleTypeAndOp(const char* name, spcclDataType_t type, spcclRedOp_t op) {
  SPCCL_CHECK(checkDatatype(name, type));
  if (type != spcclFloat32 && type != spcclFloat16 && type != spcclBfloat16)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: datatype %s is not supported: compression takes float32, float16 and "
                      "bfloat16",
                      name, spcclTypeName(type));
  return checkSumOrAvg(name, op, "the compressed all-reduce sums (spcclSum, spcclAvg)");
}

spcclResult_t checkCommAndCount(const char* name, spcclComm_t comm, size_t count) {
  SPCCL_CHECK(checkNotNull(name, "comm", comm));
  return checkSize(name, "count", count, sizeof(float));
}

}  // namespace spccl::compress

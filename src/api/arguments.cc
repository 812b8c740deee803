#include "api/arguments.h"

#include <limits>

#include "base/check.h"
#include "core/staged_call.h"

namespace spccl {

spcclResult_t checkNotNull(const char* call, const char* name, const void* pointer) {
  if (pointer == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: %s is NULL", call, name);
  return spcclSuccess;
}

spcclResult_t checkBuffer(const char* call, const char* name, const void* buffer, size_t size) {
  return size > 0 ? checkNotNull(call, name, buffer) : spcclSuccess;
}

spcclResult_t checkSendAndRecv(const char* call, const void* sendbuff, const void* recvbuff,
                               size_t size) {
  SPCCL_CHECK(checkBuffer(call, "sendbuff", sendbuff, size));
  return checkBuffer(call, "recvbuff", recvbuff, size);
}

spcclResult_t checkSize(const char* call, const char* name, size_t count, size_t elementBytes,
                        size_t* bytes) {
  size_t product = 0;
  if (__builtin_mul_overflow(count, elementBytes, &product) ||
      product > static_cast<size_t>(std::numeric_limits<ssize_t>::max()))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %zu overflows the addressable size", call, name,
                      count);
  if (bytes != nullptr) *bytes = product;
  return spcclSuccess;
}

spcclResult_t checkRank(const char* call, const char* name, int rank, int nranks) {
  if (rank < 0 || rank >= nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %d is out of range for %d ranks", call, name,
                      rank, nranks);
  return spcclSuccess;
}

spcclResult_t failInvalidEnum(const char* call, const char* name, int value, const char* typeName) {
  return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %d is not a valid %s", call, name, value,
                    typeName);
}

spcclResult_t checkDatatype(const char* call, spcclDataType_t datatype) {
  return checkEnum(call, "datatype", datatype, spcclNumTypes, "spcclDataType_t");
}

spcclResult_t checkOp(const char* call, spcclRedOp_t op) {
  return checkEnum(call, "op", op, spcclNumOps, "spcclRedOp_t");
}

spcclResult_t checkSumOrAvg(const char* call, spcclRedOp_t op, const char* why) {
  SPCCL_CHECK(checkOp(call, op));
  if (op != spcclSum && op != spcclAvg)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: op %s is not supported: %s", call, spcclOpName(op),
                      why);
  return spcclSuccess;
}

spcclResult_t checkCommon(const char* call, spcclComm_t comm, const void* stream,
                          spcclDataType_t datatype) {
  SPCCL_CHECK(checkNotNull(call, "comm", comm));
  (void)stream;  // any stream: core/staged_call.h checks it when the call is staged
  SPCCL_CHECK(checkNoAsyncError(call, comm));
  return checkDatatype(call, datatype);
}

}  // namespace spccl

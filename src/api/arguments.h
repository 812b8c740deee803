// The argument checks the C API's entry points share. Each failure names
// the call and the argument ("spcclAllReduce: count 5 overflows the
// addressable size"): users and tests match on these words, so every entry
// point words the same mistake the same way.
#pragma once

#include <cstddef>

#include "base/enum_args.h"
#include "spccl.h"

namespace spccl {

// "<call>: <name> is NULL".
spcclResult_t checkNotNull(const char* call, const char* name, const void* pointer);

// A buffer may be NULL only when it holds nothing: size (in bytes or in
// elements, only 0 matters) is 0.
spcclResult_t checkBuffer(const char* call, const char* name, const void* buffer, size_t size);
// sendbuff, then recvbuff, each of `size`.
spcclResult_t checkSendAndRecv(const char* call, const void* sendbuff, const void* recvbuff,
                               size_t size);

// *bytes (when given) = count * elementBytes; fails when that overflows or
// passes what ssize_t can address. `name` is the count's argument
// ("count", "nnz").
spcclResult_t checkSize(const char* call, const char* name, size_t count, size_t elementBytes,
                        size_t* bytes = nullptr);

// rank in [0, nranks); `name` says which rank argument ("root", "peer").
spcclResult_t checkRank(const char* call, const char* name, int rank, int nranks);

// checkEnum's failure, out of line.
spcclResult_t failInvalidEnum(const char* call, const char* name, int value, const char* typeName);

// "<call>: <name> 7 is not a valid <typeName>" unless value is one of the
// first `count` enumerators.
template <typename Enum>
spcclResult_t checkEnum(const char* call, const char* name, const Enum& value, int count,
                        const char* typeName) {
  return validEnum(value, count) ? spcclSuccess
                                 : failInvalidEnum(call, name, rawEnumValue(value), typeName);
}

spcclResult_t checkDatatype(const char* call, spcclDataType_t datatype);
spcclResult_t checkOp(const char* call, spcclRedOp_t op);
// A valid op that is spcclSum or spcclAvg; `why` ends the message
// ("<call>: op max is not supported: <why>").
spcclResult_t checkSumOrAvg(const char* call, spcclRedOp_t op, const char* why);

// What every data-moving call checks first, in this order: comm, an
// earlier stream-ordered failure on it (core/staged_call.h), datatype.
spcclResult_t checkCommon(const char* call, spcclComm_t comm, const void* stream,
                          spcclDataType_t datatype);

}  // namespace spccl

// The API calls that need no communicator: version, error strings, type names.
#include "spccl.h"

extern "C" {

spcclResult_t spcclGetVersion(int* version) {
  if (version == nullptr) return spcclInvalidArgument;
  *version = SPCCL_VERSION_CODE;
  return spcclSuccess;
}

const char* spcclGetErrorString(spcclResult_t result) {
  switch (result) {
    case spcclSuccess:
      return "no error";
    case spcclSystemError:
      return "system error";
    case spcclInternalError:
      return "internal error";
    case spcclInvalidArgument:
      return "invalid argument";
    case spcclInvalidUsage:
      return "invalid usage";
    case spcclRemoteError:
      return "remote error";
    case spcclInProgress:
      return "in progress";
    case spcclTimeout:
      return "timeout";
    case spcclRevoked:
      return "communicator revoked";
    default:
      return "unknown result code";
  }
}

size_t spcclTypeSize(spcclDataType_t datatype) {
  switch (datatype) {
    case spcclInt8:
    case spcclUint8:
      return 1;
    case spcclFloat16:
    case spcclBfloat16:
      return 2;
    case spcclInt32:
    case spcclUint32:
    case spcclFloat32:
      return 4;
    case spcclInt64:
    case spcclUint64:
    case spcclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* spcclTypeName(spcclDataType_t datatype) {
  switch (datatype) {
    case spcclInt8:
      return "int8";
    case spcclUint8:
      return "uint8";
    case spcclInt32:
      return "int32";
    case spcclUint32:
      return "uint32";
    case spcclInt64:
      return "int64";
    case spcclUint64:
      return "uint64";
    case spcclFloat16:
      return "half";
    case spcclFloat32:
      return "float";
    case spcclFloat64:
      return "double";
    case spcclBfloat16:
      return "bfloat16";
    default:
      return "invalid-type";
  }
}

const char* spcclOpName(spcclRedOp_t op) {
  switch (op) {
    case spcclSum:
      return "sum";
    case spcclProd:
      return "prod";
    case spcclMax:
      return "max";
    case spcclMin:
      return "min";
    case spcclAvg:
      return "avg";
    default:
      return "invalid-op";
  }
}

}  // extern "C"

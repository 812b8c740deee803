// What every entry point of nccl.h runs its body through, as spccl's own C
// API does (src/api/api_guard.h): no C++ exception crosses into the NCCL
// program (base/c_boundary.h). Memory that ran out becomes ncclSystemError,
// as NCCL reports a failed malloc; any other exception ncclInternalError.
// Each message names the call (ncclGetLastError) and is made without
// allocating (errors.h).
#pragma once

#include <nccl.h>

#include "base/c_boundary.h"

namespace spccl::nccl {

// A C++ exception the call met, as its error; remembered and logged as
// fail() does.
ncclResult_t failCaught(const char* call, bool outOfMemory, const char* what);

template <typename Body>
ncclResult_t guardEntry(const char* call, Body&& body) noexcept {
  return catchAtCBoundary(body, [call](bool outOfMemory, const char* what) {
    return failCaught(call, outOfMemory, what);
  });
}

// An entry point whose result is not an ncclResult_t (an error string, a
// team, a rank, nothing): the failure is remembered and logged as above,
// and the call answers failed.
template <typename Result, typename Body>
Result guardEntryOr(const char* call, Result failed, Body&& body) noexcept {
  return catchAtCBoundary(body, [call, failed](bool outOfMemory, const char* what) {
    failCaught(call, outOfMemory, what);
    return failed;
  });
}

}  // namespace spccl::nccl

// What every entry point of nccl.h runs its body through, as spccl's own C
// API does (src/api/api_guard.h): no C++ exception crosses into the NCCL
// program, which cannot catch it (a C program ends, at best, in
// std::terminate). The ones the interposer can meet are std::bad_alloc
// (memory ran out: ncclSystemError, as NCCL reports a failed malloc) and,
// from the standard library, std::system_error (a thread that cannot
// start) or std::length_error (ncclInternalError). Each becomes the call's
// error with a message naming the call (ncclGetLastError), made without
// allocating (errors.h).
#pragma once

#include <nccl.h>

#include <exception>
#include <new>

namespace spccl::nccl {

ncclResult_t failOutOfMemory(const char* call);
ncclResult_t failException(const char* call, const std::exception& e);

template <typename Body>
ncclResult_t guardEntry(const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return failOutOfMemory(call);
  } catch (const std::exception& e) {
    return failException(call, e);
  }
}

// An entry point whose result is not an ncclResult_t (an error string, a
// team, a rank, nothing): the failure is logged and remembered as above,
// and the call answers failed.
template <typename Result, typename Body>
Result guardEntryOr(const char* call, Result failed, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    failOutOfMemory(call);
  } catch (const std::exception& e) {
    failException(call, e);
  }
  return failed;
}

}  // namespace spccl::nccl

// The catch that every guard of a C entry point shares (spccl's C API:
// api/api_guard.h; the NCCL and MPI interposers: interpose/nccl/
// entry_guard.h, interpose/mpi/mpi_errors.h): no C++ exception crosses
// into a C caller, which cannot catch it. The ones spccl's code can meet
// are std::bad_alloc (memory ran out) and, from the standard library,
// std::system_error (a thread that cannot start) or std::length_error.
#pragma once

#include <exception>
#include <new>

namespace spccl {

// body()'s answer; where it throws, failed(outOfMemory, what)'s, which
// reports the failure in its API's terms (and must not throw itself).
template <typename Body, typename Failed>
auto catchAtCBoundary(Body&& body, Failed&& failed) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return failed(true, "out of memory");
  } catch (const std::exception& e) {
    return failed(false, e.what());
  }
}

}  // namespace spccl

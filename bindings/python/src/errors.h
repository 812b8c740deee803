// spccl results become Python exceptions here: one place maps a failed
// spcclResult_t to the matching spccl.Error subclass (spccl/_errors.py)
// carrying the library's own message (spcclGetLastError), so Python users
// read the same text a C user would.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "spccl.h"

namespace spccl_python {

// Raises (throws pybind11::error_already_set) when result is not success.
// comm: the communicator the call ran on, whose last error names the
// problem; nullptr for calls without one (the thread's last error). Call
// with the GIL held.
void raiseOnError(spcclResult_t result, spcclComm_t comm);

// Raises the spccl.Error subclass of result (not spcclSuccess) with message,
// e.g. what a non-blocking operation failed with. Call with the GIL held.
[[noreturn]] void raiseError(spcclResult_t result, const std::string& message);

// The spccl.Error subclass instance of result with message, not raised
// (what Comm.async_error returns). Call with the GIL held.
pybind11::object errorObject(spcclResult_t result, const std::string& message);

}  // namespace spccl_python

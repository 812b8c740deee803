// spccl results become Python exceptions here: one place maps a failed
// spcclResult_t to the matching spccl.Error subclass (spccl/_errors.py)
// carrying the library's own message (spcclGetLastError), so Python users
// read the same text a C user would.
#pragma once

#include "spccl.h"

namespace spccl_python {

// Raises (throws pybind11::error_already_set) when result is not success.
// comm: the communicator the call ran on, whose last error names the
// problem; nullptr for calls without one (the thread's last error). Call
// with the GIL held.
void raiseOnError(spcclResult_t result, spcclComm_t comm);

}  // namespace spccl_python

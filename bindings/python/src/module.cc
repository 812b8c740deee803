// spccl._spccl: the thin C++ layer of the Python package. It owns
// communicators and calls the C API with the GIL released; the checks on
// arrays and tensors, and the user-facing API, are in the Python package
// (spccl/_comm.py), where numpy and torch are at hand without linking
// libtorch.
#include <pybind11/pybind11.h>

#include "comm_handle.h"

PYBIND11_MODULE(_spccl, m) {
  m.doc() = "spccl C API binding (private; use the spccl package)";
  spccl_python::bindRequest(m);
  spccl_python::bindComm(m);
  spccl_python::bindPlanners(m);
  spccl_python::bindNames(m);
}

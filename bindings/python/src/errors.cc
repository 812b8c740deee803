#include "errors.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace spccl_python {

void raiseOnError(spcclResult_t result, spcclComm_t comm) {
  if (result == spcclSuccess) return;
  // The per-communicator message when there is one: the thread's would be
  // that of whatever this thread last failed, possibly on another comm.
  raiseError(result, spcclGetLastError(comm));
}

py::object errorObject(spcclResult_t result, const std::string& message) {
  const std::string text = message.empty() ? spcclGetErrorString(result) : message;
  py::object errorClass =
      py::module_::import("spccl._errors").attr("error_class")(static_cast<int>(result));
  return errorClass(py::str(text), static_cast<int>(result));
}

void raiseError(spcclResult_t result, const std::string& message) {
  py::object error = errorObject(result, message);
  PyErr_SetObject(py::type::handle_of(error).ptr(), error.ptr());
  throw py::error_already_set();
}

}  // namespace spccl_python

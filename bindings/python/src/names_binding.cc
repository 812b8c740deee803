// The library's names of its enumerators (spcclSparseAlgorithmName, ...),
// for spccl/_enums.py's library_name and the test that holds _enums.py to
// include/spccl.h. Python passes any int: it reaches the C function through
// its bytes, as a C caller's would, so a value that is no enumerator gives
// "unknown" rather than undefined behaviour here.
#include <pybind11/pybind11.h>

#include <cstring>

#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

namespace {

template <typename Enum>
void bindName(py::module_& m, const char* name, const char* (*nameOf)(Enum)) {
  m.def(name, [nameOf](int value) {
    static_assert(sizeof(Enum) == sizeof(int));
    Enum e;
    std::memcpy(&e, &value, sizeof(e));
    return nameOf(e);
  });
}

}  // namespace

void bindNames(py::module_& m) {
  bindName(m, "op_name", spcclOpName);
  bindName(m, "type_name", spcclTypeName);
  bindName(m, "sparse_algorithm_name", spcclSparseAlgorithmName);
  bindName(m, "sparse_encoding_name", spcclSparseEncodingName);
  bindName(m, "sparse_partitioner_name", spcclSparsePartitionerName);
  bindName(m, "codec_name", spcclCodecName);
  bindName(m, "compress_schedule_name", spcclCompressScheduleName);
}

}  // namespace spccl_python

// The dense collectives on raw addresses. The Python layer (spccl/_comm.py)
// has already checked every buffer (dtype, contiguity, size, writability)
// and keeps the arrays alive for the call, so here an address is an
// integer and a type is its spcclDataType_t value.
#include <pybind11/pybind11.h>

#include <cstdint>

#include "buffer_args.h"
#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

void bindDenseCollectives(py::class_<CommHandle>& comm) {
  comm.def("all_reduce", [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                            int dtype, int op) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclAllReduce(in(send), out(recv), count, type(dtype), redOp(op), c, nullptr);
    });
  });
  comm.def("broadcast", [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                           int dtype, int root) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclBroadcast(in(send), out(recv), count, type(dtype), root, c, nullptr);
    });
  });
  comm.def("reduce", [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                        int dtype, int op, int root) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclReduce(in(send), out(recv), count, type(dtype), redOp(op), root, c, nullptr);
    });
  });
  comm.def("all_gather",
           [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t sendCount, int dtype) {
             runReleased(self, [&](spcclComm_t c) {
               return spcclAllGather(in(send), out(recv), sendCount, type(dtype), c, nullptr);
             });
           });
  comm.def("reduce_scatter", [](const CommHandle& self, uintptr_t send, uintptr_t recv,
                                size_t recvCount, int dtype, int op) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclReduceScatter(in(send), out(recv), recvCount, type(dtype), redOp(op), c, nullptr);
    });
  });
  comm.def("all_to_all",
           [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count, int dtype) {
             runReleased(self, [&](spcclComm_t c) {
               return spcclAllToAll(in(send), out(recv), count, type(dtype), c, nullptr);
             });
           });
  comm.def("barrier", [](const CommHandle& self) {
    runReleased(self, [&](spcclComm_t c) { return spcclBarrier(c, nullptr); });
  });
  comm.def("send", [](const CommHandle& self, uintptr_t send, size_t count, int dtype, int peer) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclSend(in(send), count, type(dtype), peer, c, nullptr);
    });
  });
  comm.def("recv", [](const CommHandle& self, uintptr_t recv, size_t count, int dtype, int peer) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclRecv(out(recv), count, type(dtype), peer, c, nullptr);
    });
  });
}

}  // namespace spccl_python

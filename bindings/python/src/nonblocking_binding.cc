// The non-blocking dense collectives (spcclIallReduce, ...): the same
// arguments as dense_binding.cc's blocking forms plus keep, the arrays the
// operation uses, which the returned Request holds until it completes
// (request.h). spccl/_dense.py checks the buffers as for the blocking forms.
#include <pybind11/pybind11.h>

#include <cstdint>

#include "buffer_args.h"
#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

void bindNonBlocking(py::class_<CommHandle>& comm) {
  comm.def("iall_reduce", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                             int dtype, int op, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIallReduce(in(send), out(recv), count, type(dtype), redOp(op), c, request);
    });
  });
  comm.def("ibroadcast", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                            int dtype, int root, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIbroadcast(in(send), out(recv), count, type(dtype), root, c, request);
    });
  });
  comm.def("ireduce", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t count, int dtype,
                         int op, int root, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIreduce(in(send), out(recv), count, type(dtype), redOp(op), root, c, request);
    });
  });
  comm.def("iall_gather", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t sendCount,
                             int dtype, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIallGather(in(send), out(recv), sendCount, type(dtype), c, request);
    });
  });
  comm.def("ireduce_scatter", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t recvCount,
                                 int dtype, int op, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIreduceScatter(in(send), out(recv), recvCount, type(dtype), redOp(op), c,
                                 request);
    });
  });
  comm.def("iall_to_all", [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
                             int dtype, py::object keep) {
    return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclIallToAll(in(send), out(recv), count, type(dtype), c, request);
    });
  });
  comm.def("ibarrier", [](CommHandle& self) {
    return self.start(py::none(), [](spcclComm_t c, spcclRequest_t* request) {
      return spcclIbarrier(c, request);
    });
  });
}

}  // namespace spccl_python

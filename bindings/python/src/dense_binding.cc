// The dense collectives on raw addresses. The Python layer (spccl/_comm.py)
// has already checked every buffer (dtype, contiguity, size, writability)
// and keeps the arrays alive for the call, so here an address is an
// integer and a type is its spcclDataType_t value.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "buffer_args.h"
#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

namespace {

// spcclAllToAllv reads one count and one displacement per rank: a shorter
// list would have it read past the end.
void checkPerRank(const std::vector<size_t>& values, int size, const char* name) {
  if (values.size() != static_cast<size_t>(size))
    throw py::value_error(std::string(name) + ": has " + std::to_string(values.size()) +
                          " entries, the communicator has " + std::to_string(size) + " ranks");
}

}  // namespace

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
  comm.def(
      "all_to_all_v",
      [](const CommHandle& self, uintptr_t send, const std::vector<size_t>& sendCounts,
         const std::vector<size_t>& sendDispls, uintptr_t recv,
         const std::vector<size_t>& recvCounts, const std::vector<size_t>& recvDispls, int dtype) {
        int size = 0;
        raiseOnError(spcclCommCount(self.get(), &size), self.get());
        checkPerRank(sendCounts, size, "send_counts");
        checkPerRank(sendDispls, size, "send_displs");
        checkPerRank(recvCounts, size, "recv_counts");
        checkPerRank(recvDispls, size, "recv_displs");
        runReleased(self, [&](spcclComm_t c) {
          return spcclAllToAllv(in(send), sendCounts.data(), sendDispls.data(), out(recv),
                                recvCounts.data(), recvDispls.data(), type(dtype), c, nullptr);
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

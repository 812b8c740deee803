// The load-balancing collectives (docs/algorithms.md 4, docs/migration.md):
// SEMI-migration's broadcast, slice, reduce and merged all-reduce, and
// the scatter/gather alternative. Addresses as in dense_binding.cc;
// spccl/_migrate.py has checked the buffers. A non-root rank's unused
// buffer arrives as address 0 (spccl reads it only at the root).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <utility>

#include "buffer_args.h"
#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

void bindMigrate(py::class_<CommHandle>& comm) {
  comm.def("migrate_broadcast",
           [](const CommHandle& self, uintptr_t buff, size_t count, int dtype, int straggler) {
             runReleased(self, [&](spcclComm_t c) {
               return spcclMigrateBroadcast(out(buff), count, type(dtype), straggler, c, nullptr);
             });
           });
  // Local (no messages): (begin, length) of this rank's columns.
  comm.def("migrate_slice", [](const CommHandle& self, int straggler, size_t total) {
    size_t begin = 0, length = 0;
    spcclComm_t c = self.get();
    raiseOnError(spcclMigrateSlice(c, straggler, total, &begin, &length), c);
    return std::make_pair(begin, length);
  });
  comm.def("migrate_reduce", [](const CommHandle& self, uintptr_t send, uintptr_t recv,
                                size_t count, int dtype, int op, int dest) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclMigrateReduce(in(send), out(recv), count, type(dtype), redOp(op), dest, c,
                                nullptr);
    });
  });
  comm.def("migrate_all_reduce",
           [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count,
              uintptr_t migrated, size_t migratedCount, size_t migratedOffset, int dtype, int op) {
             runReleased(self, [&](spcclComm_t c) {
               return spcclMigrateAllReduce(in(send), out(recv), count, in(migrated), migratedCount,
                                            migratedOffset, type(dtype), redOp(op), c, nullptr);
             });
           });
  comm.def("scatter", [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t recvCount,
                         int dtype, int root) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclScatter(in(send), out(recv), recvCount, type(dtype), root, c, nullptr);
    });
  });
  comm.def("gather", [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t sendCount,
                        int dtype, int root) {
    runReleased(self, [&](spcclComm_t c) {
      return spcclGather(in(send), out(recv), sendCount, type(dtype), root, c, nullptr);
    });
  });
}

}  // namespace spccl_python

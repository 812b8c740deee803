// Compressed all-reduce (docs/algorithms.md 3, docs/compressed.md). Addresses as
// in dense_binding.cc; spccl/_compressed.py has checked the buffers and the
// configuration, which arrives as the fields of spcclCompression
// (compression_config.h). The non-blocking form also takes keep, the arrays
// the returned Request holds until it completes (request.h).
#include <pybind11/pybind11.h>

#include <cstdint>

#include "comm_handle.h"
#include "compression_config.h"

namespace py = pybind11;

namespace spccl_python {

void bindCompressed(py::class_<CommHandle>& comm) {
  comm.def("compressed_all_reduce", [](const CommHandle& self, uintptr_t send, uintptr_t recv,
                                       size_t count, int dtype, int op, int codec, int bits,
                                       size_t blockSize, int schedule, uintptr_t residual) {
    const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
    runReleased(self, [&](spcclComm_t c) {
      return spcclCompressedAllReduce(
          reinterpret_cast<const void*>(send), reinterpret_cast<void*>(recv), count,
          static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), &cfg, c, nullptr);
    });
  });
  comm.def(
      "icompressed_all_reduce",
      [](CommHandle& self, uintptr_t send, uintptr_t recv, size_t count, int dtype, int op,
         int codec, int bits, size_t blockSize, int schedule, uintptr_t residual, py::object keep) {
        // spcclIcompressedAllReduce copies cfg.
        const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
        return self.start(std::move(keep), [&](spcclComm_t c, spcclRequest_t* request) {
          return spcclIcompressedAllReduce(
              reinterpret_cast<const void*>(send), reinterpret_cast<void*>(recv), count,
              static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), &cfg, c, request);
        });
      });
}

}  // namespace spccl_python

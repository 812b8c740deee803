// Compressed all-reduce (SPEC section 3, docs/compressed.md). Addresses as
// in dense_binding.cc; spccl/_compressed.py has checked the buffers and the
// configuration, which arrives as the fields of spcclCompression. The
// residual is an address too: 0 turns error feedback off.
#include <cstdint>

#include <pybind11/pybind11.h>

#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

namespace {

spcclCompression makeCompression(int codec, int bits, size_t blockSize, int schedule,
                                 uintptr_t residual) {
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.codec = static_cast<spcclCodec_t>(codec);
  cfg.bits = bits;
  cfg.blockSize = blockSize;
  cfg.schedule = static_cast<spcclCompressSchedule_t>(schedule);
  cfg.residual = reinterpret_cast<float*>(residual);
  return cfg;
}

}  // namespace

void bindCompressed(py::class_<CommHandle>& comm) {
  comm.def("compressed_all_reduce",
           [](const CommHandle& self, uintptr_t send, uintptr_t recv, size_t count, int dtype,
              int op, int codec, int bits, size_t blockSize, int schedule, uintptr_t residual) {
             const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
             runReleased(self, [&](spcclComm_t c) {
               return spcclCompressedAllReduce(
                   reinterpret_cast<const void*>(send), reinterpret_cast<void*>(recv), count,
                   static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), &cfg, c,
                   nullptr);
             });
           });
}

}  // namespace spccl_python

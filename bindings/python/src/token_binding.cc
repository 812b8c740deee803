// Token-level top-k all-reduce (AccTFM section 4.3.1, docs/compressed.md):
// the top-k call (scores in, mask out) and the mask call. Addresses as in
// dense_binding.cc; spccl/_token_topk.py has checked the buffers. compressed
// false passes cfg NULL (the kept rows are all-reduced exactly) and the
// compression fields are then ignored. The non-blocking forms also take
// keep, the arrays the returned Request holds until it completes.
#include <pybind11/pybind11.h>

#include <cstdint>

#include "comm_handle.h"
#include "compression_config.h"

namespace py = pybind11;

namespace spccl_python {

void bindTokenTopk(py::class_<CommHandle>& comm) {
  comm.def(
      "token_topk_all_reduce",
      [](const CommHandle& self, uintptr_t buff, uintptr_t scores, size_t tokens, size_t hidden,
         int dtype, int op, size_t keep, bool compressed, int codec, int bits, size_t blockSize,
         int schedule, uintptr_t residual, int prunePolicy, uintptr_t maskOut) {
        const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
        runReleased(self, [&](spcclComm_t c) {
          return spcclTokenTopkAllReduce(
              reinterpret_cast<void*>(buff), reinterpret_cast<const float*>(scores), tokens, hidden,
              static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), keep,
              compressed ? &cfg : nullptr, static_cast<spcclPrunePolicy_t>(prunePolicy),
              reinterpret_cast<unsigned char*>(maskOut), c, nullptr);
        });
      });
  comm.def("token_mask_all_reduce", [](const CommHandle& self, uintptr_t buff, uintptr_t mask,
                                       size_t tokens, size_t hidden, int dtype, int op,
                                       bool compressed, int codec, int bits, size_t blockSize,
                                       int schedule, uintptr_t residual, int prunePolicy) {
    const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
    runReleased(self, [&](spcclComm_t c) {
      return spcclTokenMaskAllReduce(
          reinterpret_cast<void*>(buff), reinterpret_cast<const unsigned char*>(mask), tokens,
          hidden, static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op),
          compressed ? &cfg : nullptr, static_cast<spcclPrunePolicy_t>(prunePolicy), c, nullptr);
    });
  });
  // The non-blocking forms; spccl copies cfg.
  comm.def(
      "itoken_topk_all_reduce",
      [](CommHandle& self, uintptr_t buff, uintptr_t scores, size_t tokens, size_t hidden,
         int dtype, int op, size_t keep, bool compressed, int codec, int bits, size_t blockSize,
         int schedule, uintptr_t residual, int prunePolicy, uintptr_t maskOut, py::object alive) {
        const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
        return self.start(std::move(alive), [&](spcclComm_t c, spcclRequest_t* request) {
          return spcclItokenTopkAllReduce(
              reinterpret_cast<void*>(buff), reinterpret_cast<const float*>(scores), tokens, hidden,
              static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), keep,
              compressed ? &cfg : nullptr, static_cast<spcclPrunePolicy_t>(prunePolicy),
              reinterpret_cast<unsigned char*>(maskOut), c, request);
        });
      });
  comm.def("itoken_mask_all_reduce", [](CommHandle& self, uintptr_t buff, uintptr_t mask,
                                        size_t tokens, size_t hidden, int dtype, int op,
                                        bool compressed, int codec, int bits, size_t blockSize,
                                        int schedule, uintptr_t residual, int prunePolicy,
                                        py::object alive) {
    const spcclCompression cfg = makeCompression(codec, bits, blockSize, schedule, residual);
    return self.start(std::move(alive), [&](spcclComm_t c, spcclRequest_t* request) {
      return spcclItokenMaskAllReduce(
          reinterpret_cast<void*>(buff), reinterpret_cast<const unsigned char*>(mask), tokens,
          hidden, static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op),
          compressed ? &cfg : nullptr, static_cast<spcclPrunePolicy_t>(prunePolicy), c, request);
    });
  });
}

}  // namespace spccl_python

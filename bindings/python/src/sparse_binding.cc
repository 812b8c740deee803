// Sparse all-reduce (docs/algorithms.md 2): dense in/out, COO in/dense out, COO
// in/COO out, and the planner's statistics per tag. Addresses as in
// dense_binding.cc; options arrive as the four fields of
// spcclSparseOptions_t.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>

#include "comm_handle.h"

namespace py = pybind11;

namespace spccl_python {

namespace {

spcclSparseOptions_t makeOptions(int algorithm, uint64_t tag, int encoding, int partitioner) {
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.algorithm = static_cast<spcclSparseAlgorithm_t>(algorithm);
  options.tag = tag;
  options.encoding = static_cast<spcclSparseEncoding_t>(encoding);
  options.partitioner = static_cast<spcclSparsePartitioner_t>(partitioner);
  return options;
}

py::dict statsDict(const spcclSparseStats_t& s) {
  py::dict d;
  d["calls"] = s.calls;
  d["algorithm"] = static_cast<int>(s.algorithm);
  d["reason"] = std::string(s.reason);
  py::list predicted;
  for (double seconds : s.predictedSeconds) predicted.append(seconds);
  d["predicted_seconds"] = predicted;
  d["density"] = s.density;
  d["gamma"] = s.gamma;
  d["push_imbalance"] = s.pushImbalance;
  d["pull_imbalance"] = s.pullImbalance;
  d["bytes_sent"] = s.bytesSent;
  d["bytes_received"] = s.bytesReceived;
  d["predicted_bytes_sent"] = s.predictedBytesSent;
  d["measured_seconds"] = s.measuredSeconds;
  return d;
}

}  // namespace

void bindSparse(py::class_<CommHandle>& comm) {
  comm.def("sparse_all_reduce", [](const CommHandle& self, uintptr_t send, uintptr_t recv,
                                   size_t count, int dtype, int op, int algorithm, uint64_t tag,
                                   int encoding, int partitioner) {
    const spcclSparseOptions_t options = makeOptions(algorithm, tag, encoding, partitioner);
    runReleased(self, [&](spcclComm_t c) {
      return spcclSparseAllReduceWithOptions(
          reinterpret_cast<const void*>(send), reinterpret_cast<void*>(recv), count,
          static_cast<spcclDataType_t>(dtype), static_cast<spcclRedOp_t>(op), &options, c, nullptr);
    });
  });
  comm.def("sparse_all_reduce_coo", [](const CommHandle& self, uintptr_t indices, int indexType,
                                       uintptr_t values, size_t nnz, size_t count, int dtype,
                                       int op, uintptr_t recv, int algorithm, uint64_t tag,
                                       int encoding, int partitioner) {
    const spcclSparseOptions_t options = makeOptions(algorithm, tag, encoding, partitioner);
    runReleased(self, [&](spcclComm_t c) {
      return spcclSparseAllReduceCoo(
          reinterpret_cast<const void*>(indices), static_cast<spcclIndexType_t>(indexType),
          reinterpret_cast<const void*>(values), nnz, count, static_cast<spcclDataType_t>(dtype),
          static_cast<spcclRedOp_t>(op), reinterpret_cast<void*>(recv), &options, c, nullptr);
    });
  });
  // Returns the result's nnz (the Python layer gives room for count).
  comm.def("sparse_all_reduce_coo_to_coo", [](const CommHandle& self, uintptr_t indices,
                                              int indexType, uintptr_t values, size_t nnz,
                                              size_t count, int dtype, int op, uintptr_t outIndices,
                                              uintptr_t outValues, size_t capacity, int algorithm,
                                              uint64_t tag, int encoding, int partitioner) {
    const spcclSparseOptions_t options = makeOptions(algorithm, tag, encoding, partitioner);
    size_t outNnz = 0;
    runReleased(self, [&](spcclComm_t c) {
      return spcclSparseAllReduceCooToCoo(
          reinterpret_cast<const void*>(indices), static_cast<spcclIndexType_t>(indexType),
          reinterpret_cast<const void*>(values), nnz, count, static_cast<spcclDataType_t>(dtype),
          static_cast<spcclRedOp_t>(op), reinterpret_cast<void*>(outIndices),
          reinterpret_cast<void*>(outValues), capacity, &outNnz, &options, c, nullptr);
    });
    return outNnz;
  });
  comm.def("sparse_stats", [](const CommHandle& self, uint64_t tag) {
    spcclSparseStats_t stats{};
    stats.size = sizeof(stats);
    runReleased(self, [&](spcclComm_t c) { return spcclSparseGetStats(c, tag, &stats); });
    return statsDict(stats);
  });
}

}  // namespace spccl_python

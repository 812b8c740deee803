#include "sparse/sparse_output.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/set_merge.h"

namespace spccl::sparse {

spcclResult_t deliverResult(const SparseCall& call, const kernels::KernelTable& table, int nranks,
                            SparseSet* result, size_t* outputNnz) {
  const size_t valueBytes = spcclTypeSize(call.type);
  if (call.op == spcclAvg) table.divide[call.type](result->values.data(), result->size(), nranks);
  if (call.resultOut != nullptr && call.denseOutput == nullptr) {
    // As the dense output would get it, without the tensor: no zeros
    // dropped (-0.0 keeps its bits), any order.
    *outputNnz = kernels::countNonZeros(call.type, result->values.data(), result->size());
    call.resultOut->pairs = std::move(*result);
    return spcclSuccess;
  }
  if (!call.cooOutput) {
    auto* densifyResult = result->ascending ? kernels::densify : kernels::densifyUnordered;
    densifyResult(valueBytes, result->positions.data(), result->values.data(), result->size(),
                  call.denseOutput, call.count);
    *outputNnz = kernels::countNonZeros(call.type, result->values.data(), result->size());
    return spcclSuccess;
  }
  dropZeros(call.type, valueBytes, result);
  const size_t nnz = result->size();
  *outputNnz = nnz;
  *call.outNnz = nnz;
  if (nnz > call.outCapacity)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: the result has %zu non-zeros but outCapacity is %zu; nothing written, "
                      "*outNnz holds the size needed",
                      call.name, nnz, call.outCapacity);
  if (nnz == 0) return spcclSuccess;
  std::memcpy(call.outValues, result->values.data(), nnz * valueBytes);
  if (call.outIndexType == spcclIndexUint64) {
    std::memcpy(call.outIndices, result->positions.data(), nnz * sizeof(uint64_t));
  } else {  // the API layer checked that count fits in 32 bits
    auto* out = static_cast<uint32_t*>(call.outIndices);
    for (size_t i = 0; i < nnz; ++i) out[i] = static_cast<uint32_t>(result->positions[i]);
  }
  return spcclSuccess;
}

void finishDenseResult(const SparseCall& call, const kernels::KernelTable& table, int nranks,
                       void* dense, size_t knownNnz, size_t* outputNnz) {
  if (call.op == spcclAvg) {
    table.divide[call.type](dense, call.count, nranks);
    knownNnz = SIZE_MAX;  // an integer division may have made zeros
  }
  *outputNnz =
      knownNnz != SIZE_MAX ? knownNnz : kernels::countNonZeros(call.type, dense, call.count);
}

}  // namespace spccl::sparse

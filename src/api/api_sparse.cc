// API: sparse all-reduce (SPEC section 2) and its statistics. Arguments are
// validated here with messages that name the argument; a COO input whose
// content is wrong (an index out of range) fails this rank with
// spcclInvalidArgument and, through the call's agreement round, every other
// rank with spcclInvalidUsage, so no peer waits for it.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>

#include "base/check.h"
#include "base/enum_args.h"
#include "core/comm.h"
#include "kernels/sparse_kernels.h"
#include "sparse/comm_state.h"
#include "sparse/sparse_allreduce.h"
#include "spccl.h"

using namespace spccl;
using spccl::sparse::SparseCall;
using spccl::sparse::SparseOptions;

namespace {

// Fields past the caller's size keep their defaults (an older, smaller
// struct); a struct larger than ours is read up to our size.
spcclResult_t resolveOptions(const spcclSparseOptions_t* o, const char* call, SparseOptions* out) {
  *out = SparseOptions{};
  if (o == nullptr) return spcclSuccess;
  const size_t header = offsetof(spcclSparseOptions_t, version) + sizeof(o->version);
  if (o->size < header)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: options->size %zu is too small; initialise the options with "
                      "SPCCL_SPARSE_OPTIONS_INITIALIZER",
                      call, o->size);
  if (o->magic != SPCCL_SPARSE_OPTIONS_MAGIC)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: options magic 0x%08x is wrong; initialise the options with "
                      "SPCCL_SPARSE_OPTIONS_INITIALIZER",
                      call, o->magic);
  auto has = [o](size_t offset, size_t bytes) { return offset + bytes <= o->size; };
  if (has(offsetof(spcclSparseOptions_t, algorithm), sizeof(o->algorithm))) {
    if (!validEnum(o->algorithm, spcclSparseNumAlgorithms))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: options->algorithm %d is not a valid "
                        "spcclSparseAlgorithm_t",
                        call, rawEnumValue(o->algorithm));
    out->algorithm = o->algorithm;
  }
  if (has(offsetof(spcclSparseOptions_t, tag), sizeof(o->tag))) out->tag = o->tag;
  if (has(offsetof(spcclSparseOptions_t, encoding), sizeof(o->encoding))) {
    if (!validEnum(o->encoding, spcclNumEncodings))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: options->encoding %d is not a valid "
                        "spcclSparseEncoding_t",
                        call, rawEnumValue(o->encoding));
    out->encoding = o->encoding;
  }
  if (has(offsetof(spcclSparseOptions_t, partitioner), sizeof(o->partitioner))) {
    if (!validEnum(o->partitioner, spcclNumPartitioners))
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: options->partitioner %d is not a valid "
                        "spcclSparsePartitioner_t",
                        call, rawEnumValue(o->partitioner));
    out->partitioner = o->partitioner;
  }
  return spcclSuccess;
}

spcclResult_t checkBytes(size_t count, size_t elementBytes, const char* what, const char* call) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, elementBytes, &bytes) ||
      bytes > static_cast<size_t>(std::numeric_limits<ssize_t>::max()))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %zu overflows the addressable size", call, what,
                      count);
  return spcclSuccess;
}

spcclResult_t checkCommon(spcclComm_t comm, size_t count, spcclDataType_t type, spcclRedOp_t op,
                          const void* stream, const char* call) {
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "%s: comm is NULL", call);
  if (stream != nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: stream must be NULL (host buffers); device memory is not supported yet",
                      call);
  if (!validEnum(type, spcclNumTypes))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: datatype %d is not a valid spcclDataType_t", call,
                      static_cast<int>(type));
  if (!validEnum(op, spcclNumOps))
    return SPCCL_FAIL(spcclInvalidArgument, "%s: op %d is not a valid spcclRedOp_t", call,
                      static_cast<int>(op));
  if (op != spcclSum && op != spcclAvg)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: op %s is not supported: sparse all-reduce skips zeros, which is "
                      "lossless only for sum and avg",
                      call, spcclOpName(op));
  return checkBytes(count, spcclTypeSize(type), "count", call);
}

spcclResult_t checkPointer(const void* p, bool needed, const char* name, const char* call) {
  if (p == nullptr && needed) return SPCCL_FAIL(spcclInvalidArgument, "%s: %s is NULL", call, name);
  return spcclSuccess;
}

spcclResult_t checkIndexType(spcclIndexType_t type, size_t count, const char* call) {
  if (type != spcclIndexUint32 && type != spcclIndexUint64)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: indexType %d is not a valid spcclIndexType_t",
                      call, static_cast<int>(type));
  if (type == spcclIndexUint32 && count > (uint64_t{1} << 32))
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: count %zu exceeds what spcclIndexUint32 indices can address", call,
                      count);
  return spcclSuccess;
}

uint64_t indexAt(const void* indices, spcclIndexType_t type, size_t i) {
  return type == spcclIndexUint32 ? static_cast<const uint32_t*>(indices)[i]
                                  : static_cast<const uint64_t*>(indices)[i];
}

// COO in: every index < count (else the first bad one is named), then
// sorted, duplicates summed in input order (deterministic), zeros dropped.
spcclResult_t canonicalCoo(const void* indices, spcclIndexType_t indexType, const void* values,
                           size_t nnz, SparseCall* call) {
  for (size_t i = 0; i < nnz; ++i) {
    const uint64_t index = indexAt(indices, indexType, i);
    if (index >= call->count)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "%s: indices[%zu] = %llu is out of range for count %zu", call->name, i,
                        static_cast<unsigned long long>(index), call->count);
  }
  std::vector<size_t> order(nnz);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return indexAt(indices, indexType, a) < indexAt(indices, indexType, b);
  });
  std::vector<uint64_t> unique;
  std::vector<uint64_t> slotOf(nnz);
  for (size_t k = 0; k < nnz; ++k) {
    const uint64_t index = indexAt(indices, indexType, order[k]);
    if (unique.empty() || unique.back() != index) unique.push_back(index);
    slotOf[order[k]] = unique.size() - 1;
  }
  const size_t valueBytes = spcclTypeSize(call->type);
  std::vector<unsigned char> sums(unique.size() * valueBytes, 0);
  kernels::scatterReduce(call->type, spcclSum, sums.data(), slotOf.data(), values, nnz);
  std::vector<uint64_t> kept(unique.size());
  call->values.resize(unique.size() * valueBytes);
  const size_t nonZero = kernels::extractNonZeros(call->type, sums.data(), unique.size(),
                                                  kept.data(), call->values.data(), unique.size());
  call->indices.resize(nonZero);
  for (size_t i = 0; i < nonZero; ++i) call->indices[i] = unique[kept[i]];
  call->values.resize(nonZero * valueBytes);
  return spcclSuccess;
}

// Validates a COO input; a content error leaves the call runnable with
// inputValid = false (the rank still takes part in the agreement).
spcclResult_t prepareCooInput(const void* indices, spcclIndexType_t indexType, const void* values,
                              size_t nnz, SparseCall* call) {
  SPCCL_CHECK(checkIndexType(indexType, call->count, call->name));
  SPCCL_CHECK(checkBytes(nnz, sizeof(uint64_t), "nnz", call->name));
  SPCCL_CHECK(checkPointer(indices, nnz > 0, "indices", call->name));
  SPCCL_CHECK(checkPointer(values, nnz > 0, "values", call->name));
  if (canonicalCoo(indices, indexType, values, nnz, call) != spcclSuccess) call->inputValid = false;
  return spcclSuccess;
}

spcclResult_t submit(spcclComm_t comm, SparseCall& call) {
  return runCollectiveBlocking(comm, sparse::signatureOf(call), [&](CollContext& ctx) {
    return sparse::runSparseAllReduce(ctx, *comm->sparse, call);
  });
}

// The part every sparse entry point shares: the call's identity, then the
// checks of comm, count, type, op, stream and options.
spcclResult_t beginCall(const char* name, spcclComm_t comm, size_t count, spcclDataType_t datatype,
                        spcclRedOp_t op, void* stream, const spcclSparseOptions_t* options,
                        SparseCall* call) {
  clearThreadLastError();
  call->name = name;
  call->count = count;
  call->type = datatype;
  call->op = op;
  SPCCL_CHECK(checkCommon(comm, count, datatype, op, stream, name));
  return resolveOptions(options, name, &call->options);
}

}  // namespace

extern "C" {

spcclResult_t spcclSparseAllReduceWithOptions(const void* sendbuff, void* recvbuff, size_t count,
                                              spcclDataType_t datatype, spcclRedOp_t op,
                                              const spcclSparseOptions_t* options, spcclComm_t comm,
                                              void* stream) {
  SparseCall call;
  spcclResult_t res =
      beginCall("spcclSparseAllReduce", comm, count, datatype, op, stream, options, &call);
  if (res == spcclSuccess) res = checkPointer(sendbuff, count > 0, "sendbuff", call.name);
  if (res == spcclSuccess) res = checkPointer(recvbuff, count > 0, "recvbuff", call.name);
  if (res != spcclSuccess) return rejectCall(comm, res);
  call.denseInput = sendbuff;
  call.denseOutput = recvbuff;
  return submit(comm, call);
}

spcclResult_t spcclSparseAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                   spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                   void* stream) {
  return spcclSparseAllReduceWithOptions(sendbuff, recvbuff, count, datatype, op, nullptr, comm,
                                         stream);
}

spcclResult_t spcclSparseAllReduceCoo(const void* indices, spcclIndexType_t indexType,
                                      const void* values, size_t nnz, size_t count,
                                      spcclDataType_t datatype, spcclRedOp_t op, void* recvbuff,
                                      const spcclSparseOptions_t* options, spcclComm_t comm,
                                      void* stream) {
  SparseCall call;
  spcclResult_t res =
      beginCall("spcclSparseAllReduceCoo", comm, count, datatype, op, stream, options, &call);
  if (res == spcclSuccess) res = checkPointer(recvbuff, count > 0, "recvbuff", call.name);
  if (res == spcclSuccess) res = prepareCooInput(indices, indexType, values, nnz, &call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  call.denseOutput = recvbuff;
  return submit(comm, call);
}

spcclResult_t spcclSparseAllReduceCooToCoo(const void* indices, spcclIndexType_t indexType,
                                           const void* values, size_t nnz, size_t count,
                                           spcclDataType_t datatype, spcclRedOp_t op,
                                           void* outIndices, void* outValues, size_t outCapacity,
                                           size_t* outNnz, const spcclSparseOptions_t* options,
                                           spcclComm_t comm, void* stream) {
  SparseCall call;
  spcclResult_t res =
      beginCall("spcclSparseAllReduceCooToCoo", comm, count, datatype, op, stream, options, &call);
  if (res == spcclSuccess) res = checkPointer(outNnz, true, "outNnz", call.name);
  if (res == spcclSuccess) res = checkPointer(outIndices, outCapacity > 0, "outIndices", call.name);
  if (res == spcclSuccess) res = checkPointer(outValues, outCapacity > 0, "outValues", call.name);
  if (res == spcclSuccess) res = prepareCooInput(indices, indexType, values, nnz, &call);
  if (res != spcclSuccess) return rejectCall(comm, res);
  call.cooOutput = true;
  call.outIndexType = indexType;
  call.outIndices = outIndices;
  call.outValues = outValues;
  call.outCapacity = outCapacity;
  call.outNnz = outNnz;
  return submit(comm, call);
}

spcclResult_t spcclSparseGetStats(spcclComm_t comm, uint64_t tag, spcclSparseStats_t* stats) {
  clearThreadLastError();
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclSparseGetStats: comm is NULL");
  if (stats == nullptr)
    return finishCall(comm, SPCCL_FAIL(spcclInvalidArgument, "spcclSparseGetStats: stats is NULL"));
  sparse::SparseCallStats record;
  if (comm->sparse) comm->sparse->planner.statsFor(tag, &record);
  return finishCall(comm, sparse::copyStatsOut(record, stats));
}

}  // extern "C"

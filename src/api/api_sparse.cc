// API: sparse all-reduce (docs/algorithms.md 2) and its statistics. Arguments are
// validated here with messages that name the argument; a COO input whose
// content is wrong (an index out of range) fails this rank with
// spcclInvalidArgument and, through the call's agreement round, every other
// rank with spcclInvalidUsage, so no peer waits for it.
#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "api/api_guard.h"
#include "api/arguments.h"
#include "base/check.h"
#include "base/versioned_struct.h"
#include "core/comm.h"
#include "core/device_sparse_call.h"
#include "core/staged_call.h"
#include "kernels/sparse_kernels.h"
#include "sparse/comm_state.h"
#include "sparse/sparse_allreduce.h"
#include "spccl.h"

using namespace spccl;
using spccl::sparse::SparseCall;
using spccl::sparse::SparseOptions;

namespace {

spcclResult_t resolveOptions(const spcclSparseOptions_t* o, const char* call, SparseOptions* out) {
  *out = SparseOptions{};
  if (o == nullptr) return spcclSuccess;
  const VersionedStruct<spcclSparseOptions_t> in(
      *o,
      {call, "options->size", "options magic", "the options", "SPCCL_SPARSE_OPTIONS_INITIALIZER"});
  SPCCL_CHECK(in.checkHeader(SPCCL_SPARSE_OPTIONS_MAGIC));
  if (in.has(&spcclSparseOptions_t::algorithm)) {
    SPCCL_CHECK(checkEnum(call, "options->algorithm", o->algorithm, spcclSparseNumAlgorithms,
                          "spcclSparseAlgorithm_t"));
    out->algorithm = o->algorithm;
  }
  if (in.has(&spcclSparseOptions_t::tag)) out->tag = o->tag;
  if (in.has(&spcclSparseOptions_t::encoding)) {
    SPCCL_CHECK(checkEnum(call, "options->encoding", o->encoding, spcclNumEncodings,
                          "spcclSparseEncoding_t"));
    out->encoding = o->encoding;
  }
  if (in.has(&spcclSparseOptions_t::partitioner)) {
    SPCCL_CHECK(checkEnum(call, "options->partitioner", o->partitioner, spcclNumPartitioners,
                          "spcclSparsePartitioner_t"));
    out->partitioner = o->partitioner;
  }
  return spcclSuccess;
}

spcclResult_t checkCommonAndOp(const char* call, spcclComm_t comm, size_t count,
                               spcclDataType_t type, spcclRedOp_t op, const void* stream) {
  SPCCL_CHECK(checkCommon(call, comm, stream, type));
  SPCCL_CHECK(checkSumOrAvg(
      call, op, "sparse all-reduce skips zeros, which is lossless only for sum and avg"));
  return checkSize(call, "count", count, spcclTypeSize(type));
}

spcclResult_t checkIndexType(spcclIndexType_t type, size_t count, const char* call) {
  constexpr int kNumIndexTypes = 2;  // spcclIndexUint32, spcclIndexUint64
  SPCCL_CHECK(checkEnum(call, "indexType", type, kNumIndexTypes, "spcclIndexType_t"));
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

// A COO input as the caller passed it: read when the call runs (it may
// be device memory, staged on a stream).
struct CooInput {
  const void* indices = nullptr;
  spcclIndexType_t indexType = spcclIndexUint64;
  const void* values = nullptr;
  size_t nnz = 0;
};

// Validates a COO input's arguments; its content is checked when the call
// runs (canonicalCoo), and a content error leaves the call runnable with
// inputValid = false (the rank still takes part in the agreement).
spcclResult_t checkCooInput(const CooInput& in, const SparseCall& call) {
  SPCCL_CHECK(checkIndexType(in.indexType, call.count, call.name));
  SPCCL_CHECK(checkSize(call.name, "nnz", in.nnz, sizeof(uint64_t)));
  SPCCL_CHECK(checkBuffer(call.name, "indices", in.indices, in.nnz));
  return checkBuffer(call.name, "values", in.values, in.nnz);
}

size_t indexBytes(spcclIndexType_t type) {
  return type == spcclIndexUint32 ? sizeof(uint32_t) : sizeof(uint64_t);
}

// Every buffer of the call where the CPU reaches it (core/staged_call.h),
// then the call, on the caller's stream.
spcclResult_t submit(spcclComm_t comm, const SparseCall& call, const CooInput& coo, void* stream) {
  StagedCall staged(comm, call.name, stream);
  const size_t valueBytes = spcclTypeSize(call.type);
  staged.add("sendbuff", call.denseInput, call.count * valueBytes, device::Access::Read);
  staged.add("recvbuff", call.denseOutput, call.count * valueBytes, device::Access::Write);
  staged.add("indices", coo.indices, coo.nnz * indexBytes(coo.indexType), device::Access::Read);
  staged.add("values", coo.values, coo.nnz * valueBytes, device::Access::Read);
  if (call.cooOutput) {
    staged.add("outIndices", call.outIndices, call.outCapacity * indexBytes(call.outIndexType),
               device::Access::Write);
    staged.add("outValues", call.outValues, call.outCapacity * valueBytes, device::Access::Write);
    staged.add("outNnz", call.outNnz, sizeof(size_t), device::Access::Write);
  }
  // A call's input and output are of one kind (device, or reachable by
  // the CPU), whatever their form.
  spcclResult_t res = staged.requireSameKind("sendbuff", "recvbuff");
  if (res == spcclSuccess) res = staged.requireSameKind("values", "recvbuff");
  if (res == spcclSuccess) res = staged.requireSameKind("values", "outValues");
  if (res == spcclSuccess) res = staged.validate();
  // Dense device buffers: only the non-zeros cross to the host and back.
  if (res == spcclSuccess && deviceSparseApplies(staged, call)) {
    std::shared_ptr<DeviceSparsePlan> plan;
    res = prepareDeviceSparse(staged, call, &plan);
    if (res != spcclSuccess) return rejectCall(comm, res);
    return finishCall(comm, runDeviceSparse(comm, staged, call, plan));
  }
  if (res == spcclSuccess) res = staged.prepare();
  if (res != spcclSuccess) return rejectCall(comm, res);
  SparseCall host = call;
  host.denseInput = staged.hostView(call.denseInput);
  host.denseOutput = staged.hostView(call.denseOutput);
  host.outIndices = staged.hostView(call.outIndices);
  host.outValues = staged.hostView(call.outValues);
  host.outNnz = static_cast<size_t*>(staged.hostView(call.outNnz));
  CooInput hostCoo = coo;
  hostCoo.indices = staged.hostView(coo.indices);
  hostCoo.values = staged.hostView(coo.values);
  const bool isCoo = host.denseInput == nullptr;
  return finishCall(
      comm, staged.runCollective(
                sparse::signatureOf(host), [comm, host, hostCoo, isCoo](CollContext& ctx) {
                  SparseCall run = host;
                  if (isCoo && canonicalCoo(hostCoo.indices, hostCoo.indexType, hostCoo.values,
                                            hostCoo.nnz, &run) != spcclSuccess)
                    run.inputValid = false;
                  return sparse::runSparseAllReduce(ctx, *comm->sparse, run);
                }));
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
  SPCCL_CHECK(checkCommonAndOp(name, comm, count, datatype, op, stream));
  return resolveOptions(options, name, &call->options);
}

}  // namespace

extern "C" {

spcclResult_t spcclSparseAllReduceWithOptions(const void* sendbuff, void* recvbuff, size_t count,
                                              spcclDataType_t datatype, spcclRedOp_t op,
                                              const spcclSparseOptions_t* options, spcclComm_t comm,
                                              void* stream) {
  return guardCommApi("spcclSparseAllReduceWithOptions", comm, [&]() -> spcclResult_t {
    SparseCall call;
    spcclResult_t res =
        beginCall("spcclSparseAllReduce", comm, count, datatype, op, stream, options, &call);
    if (res == spcclSuccess) res = checkSendAndRecv(call.name, sendbuff, recvbuff, count);
    if (res != spcclSuccess) return rejectCall(comm, res);
    call.denseInput = sendbuff;
    call.denseOutput = recvbuff;
    return submit(comm, call, CooInput{}, stream);
  });
}

spcclResult_t spcclSparseAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                   spcclDataType_t datatype, spcclRedOp_t op, spcclComm_t comm,
                                   void* stream) {
  return guardCommApi("spcclSparseAllReduce", comm, [&]() -> spcclResult_t {
    return spcclSparseAllReduceWithOptions(sendbuff, recvbuff, count, datatype, op, nullptr, comm,
                                           stream);
  });
}

spcclResult_t spcclSparseAllReduceCoo(const void* indices, spcclIndexType_t indexType,
                                      const void* values, size_t nnz, size_t count,
                                      spcclDataType_t datatype, spcclRedOp_t op, void* recvbuff,
                                      const spcclSparseOptions_t* options, spcclComm_t comm,
                                      void* stream) {
  return guardCommApi("spcclSparseAllReduceCoo", comm, [&]() -> spcclResult_t {
    SparseCall call;
    spcclResult_t res =
        beginCall("spcclSparseAllReduceCoo", comm, count, datatype, op, stream, options, &call);
    const CooInput coo{indices, indexType, values, nnz};
    if (res == spcclSuccess) res = checkBuffer(call.name, "recvbuff", recvbuff, count);
    if (res == spcclSuccess) res = checkCooInput(coo, call);
    if (res != spcclSuccess) return rejectCall(comm, res);
    call.denseOutput = recvbuff;
    return submit(comm, call, coo, stream);
  });
}

spcclResult_t spcclSparseAllReduceCooToCoo(const void* indices, spcclIndexType_t indexType,
                                           const void* values, size_t nnz, size_t count,
                                           spcclDataType_t datatype, spcclRedOp_t op,
                                           void* outIndices, void* outValues, size_t outCapacity,
                                           size_t* outNnz, const spcclSparseOptions_t* options,
                                           spcclComm_t comm, void* stream) {
  return guardCommApi("spcclSparseAllReduceCooToCoo", comm, [&]() -> spcclResult_t {
    SparseCall call;
    spcclResult_t res = beginCall("spcclSparseAllReduceCooToCoo", comm, count, datatype, op, stream,
                                  options, &call);
    if (res == spcclSuccess) res = checkNotNull(call.name, "outNnz", outNnz);
    if (res == spcclSuccess) res = checkBuffer(call.name, "outIndices", outIndices, outCapacity);
    if (res == spcclSuccess) res = checkBuffer(call.name, "outValues", outValues, outCapacity);
    const CooInput coo{indices, indexType, values, nnz};
    if (res == spcclSuccess) res = checkCooInput(coo, call);
    if (res != spcclSuccess) return rejectCall(comm, res);
    call.cooOutput = true;
    call.outIndexType = indexType;
    call.outIndices = outIndices;
    call.outValues = outValues;
    call.outCapacity = outCapacity;
    call.outNnz = outNnz;
    return submit(comm, call, coo, stream);
  });
}

spcclResult_t spcclSparseGetStats(spcclComm_t comm, uint64_t tag, spcclSparseStats_t* stats) {
  return guardCommApi("spcclSparseGetStats", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    const char* call = "spcclSparseGetStats";
    SPCCL_CHECK(checkNotNull(call, "comm", comm));
    const spcclResult_t checked = checkNotNull(call, "stats", stats);
    if (checked != spcclSuccess) return finishCall(comm, checked);
    sparse::SparseCallStats record;
    if (comm->sparse) comm->sparse->planner.statsFor(tag, &record);
    return finishCall(comm, sparse::copyStatsOut(record, stats));
  });
}

}  // extern "C"

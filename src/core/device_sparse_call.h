// spcclSparseAllReduce of dense device buffers without staging them whole
// (docs/gpu.md, "Sparse all-reduce of device buffers"): the input's
// non-zeros are found on the GPU (sparse/device_nonzeros.h) and only those
// pairs are copied to pinned host memory; the CPU's sparse all-reduce runs
// on them in its COO-input form and gives its result as pairs where it is
// sparse (sparse::SparseResult: no dense host output), else dense; only
// the result's set elements are copied back and scattered into the zeroed
// output on the GPU. Same result bits as the staged call, on every rank,
// so each rank chooses alone.
#pragma once

#include <memory>

#include "core/staged_call.h"
#include "sparse/sparse_allreduce.h"
#include "spccl.h"

namespace spccl {

// Whether this rank runs `call` so: SPCCL_DEVICE_SPARSE=1, dense input and
// output in device memory (after staged.validate), and the kernels (CUDA at
// build time, the driver's module and stream entry points). Otherwise the
// call is staged whole, as before.
bool deviceSparseApplies(const StagedCall& staged, const sparse::SparseCall& call);

// What the call takes that might wait for the device (its stream, the
// kernels' module, pinned memory): taken by prepareDeviceSparse on the
// caller's thread, before a host function holds the caller's stream.
struct DeviceSparsePlan;

// A failure here is the call's (rejectCall: nothing ran).
spcclResult_t prepareDeviceSparse(const StagedCall& staged, const sparse::SparseCall& call,
                                  std::shared_ptr<DeviceSparsePlan>* out);

// Runs it at once (NULL stream: after the legacy stream's work) or in the
// stream's order (staged.runDirect); not finishCall'ed.
spcclResult_t runDeviceSparse(spcclComm_t comm, StagedCall& staged, const sparse::SparseCall& call,
                              const std::shared_ptr<DeviceSparsePlan>& plan);

}  // namespace spccl

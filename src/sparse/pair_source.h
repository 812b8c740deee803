// Input pairs that are not in host memory yet: the device sparse call's,
// extracted on the GPU (core/device_sparse_call.cc), which cross PCIe only
// where a schedule reads them on the host. Balanced Parallelism's keyed
// push takes its buckets from the device instead (SparseCall::bucketer),
// so there the pairs never cross: only the buckets do (docs/gpu.md,
// "Balanced Parallelism's buckets on the device").
#pragma once

#include <cstdint>

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::sparse {

class PairSource {
 public:
  virtual ~PairSource() = default;
  // Brings the call's pairs (SparseCall::nnz of them: indices unique and
  // ascending, no zero values) to the host and points *indices and
  // *values at them, valid until the call ends. Errors name the copy.
  virtual spcclResult_t fetch(const uint64_t** indices, const unsigned char** values) = 0;
};

// source.fetch inside the collective, after the call's agreement: a
// failure leaves the peers waiting for this rank's messages, so it breaks
// the communicator, which tells them now (CollContext::abortCall), not at
// their deadline.
spcclResult_t fetchInsideCall(CollContext& ctx, PairSource& source, const uint64_t** indices,
                              const unsigned char** values);

}  // namespace spccl::sparse

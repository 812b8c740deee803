// Forward mode, an all-reduce of device buffers that spccl's sparse path
// could take (routing.h: Route::needsDensity): how sparse is the data? The
// routing must be the same on every rank, and each rank sees only its own
// data, so every rank samples its send buffer and the ranks add up their
// counts over the spccl communicator; the mean they agree on is the same
// number everywhere.
//
// The sample: up to kSampleChunks evenly spaced runs of the buffer, copied
// to host memory in the order of the caller's stream (after the kernels
// that wrote it), then waited for. A strided sample, not a prefix, so that
// a gradient whose first layers are dense and last ones sparse (or the
// reverse) is not judged by one end.
#pragma once

#include <cstddef>

#include "coll_dispatch.h"
#include "spccl.h"

namespace spccl::nccl {

struct InterposedComm;

constexpr size_t kSampleChunks = 32;
constexpr size_t kSampleChunkBytes = 2048;

// The elements sampled at each chunk offset for count elements of
// elementBytes (the same on every rank: count and type are).
struct SamplePlan {
  size_t chunks = 0;
  size_t chunkElements = 0;
  size_t strideElements = 0;  // offset of chunk k: k * strideElements
};
SamplePlan planSample(size_t count, size_t elementBytes);

// Elements of elementBytes in data[0 .. elements) with a nonzero byte
// (-0.0 counts as nonzero: rare, and harmless for a threshold).
size_t countNonzero(const unsigned char* data, size_t elements, size_t elementBytes);

// The ranks' mean nonzero fraction of call's send buffer, agreed over
// comm's spccl communicator. A rank whose sample cannot be copied still
// takes part in the exchange (no rank waits for it in vain), and then
// every rank gets 1 (dense: the real NCCL, which reports the CUDA error).
// A failed exchange is returned: the communicator's failure.
spcclResult_t agreedDensity(InterposedComm* comm, const CollCall& call, double* density);

}  // namespace spccl::nccl

// A kernel that writes a buffer late on a stream: it spins for a while,
// then copies src to dst. Enqueued right before a collective on the same
// stream, it proves that the collective reads its input in stream order
// (a collective that read at once would see dst's old contents).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace spccl::gpu_test {

// After about spinMicroseconds on the device, dst[0, bytes) = src[0, bytes);
// enqueued on stream. Returns the launch's error.
cudaError_t delayedCopy(void* dst, const void* src, size_t bytes, unsigned spinMicroseconds,
                        cudaStream_t stream);

}  // namespace spccl::gpu_test

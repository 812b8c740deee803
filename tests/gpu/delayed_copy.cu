#include "delayed_copy.h"

namespace spccl::gpu_test {
namespace {

__global__ void delayedCopyKernel(unsigned char* dst, const unsigned char* src, size_t bytes,
                                  unsigned spinMicroseconds) {
  // Every thread waits (globaltimer counts nanoseconds), then copies its
  // stride; nothing of dst changes before the wait is over.
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  const unsigned long long until = start + 1000ull * spinMicroseconds;
  unsigned long long now = start;
  while (now < until) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += stride)
    dst[i] = src[i];
}

}  // namespace

cudaError_t delayedCopy(void* dst, const void* src, size_t bytes, unsigned spinMicroseconds,
                        cudaStream_t stream) {
  delayedCopyKernel<<<64, 256, 0, stream>>>(static_cast<unsigned char*>(dst),
                                            static_cast<const unsigned char*>(src), bytes,
                                            spinMicroseconds);
  return cudaGetLastError();
}

}  // namespace spccl::gpu_test

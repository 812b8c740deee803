#include "memory_kinds.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spccl::gpu_test {

const char* memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Device:
      return "device";
    case MemoryKind::Pinned:
      return "pinned";
    case MemoryKind::Managed:
      return "managed";
    default:
      return "host";
  }
}

void cudaOrDie(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "FATAL: %s: %s\n", what, cudaGetErrorString(status));
  std::fflush(stderr);
  std::abort();
}

KindBuffer::KindBuffer(MemoryKind kind, size_t bytes) : kind_(kind), bytes_(bytes) {
  const size_t allocated = bytes == 0 ? 1 : bytes;
  switch (kind) {
    case MemoryKind::Device:
      SPCCL_CUDA_OR_DIE(cudaMalloc(&data_, allocated));
      SPCCL_CUDA_OR_DIE(cudaMemset(data_, 0x5a, allocated));
      SPCCL_CUDA_OR_DIE(cudaDeviceSynchronize());
      return;
    case MemoryKind::Pinned:
      SPCCL_CUDA_OR_DIE(cudaMallocHost(&data_, allocated));
      break;
    case MemoryKind::Managed:
      SPCCL_CUDA_OR_DIE(cudaMallocManaged(&data_, allocated));
      break;
    default:
      data_ = std::malloc(allocated);
      if (data_ == nullptr) cudaOrDie(cudaErrorMemoryAllocation, "malloc");
      break;
  }
  std::memset(data_, 0x5a, allocated);
}

KindBuffer::~KindBuffer() {
  switch (kind_) {
    case MemoryKind::Device:
    case MemoryKind::Managed:
      cudaFree(data_);
      break;
    case MemoryKind::Pinned:
      cudaFreeHost(data_);
      break;
    default:
      std::free(data_);
      break;
  }
}

void KindBuffer::upload(const void* host, size_t bytes, cudaStream_t stream, size_t offset) {
  if (bytes == 0) return;
  if (kind_ == MemoryKind::Host) {  // no CUDA call needed (nor a driver, with stream NULL)
    if (stream != nullptr) SPCCL_CUDA_OR_DIE(cudaStreamSynchronize(stream));
    std::memcpy(static_cast<char*>(data_) + offset, host, bytes);
    return;
  }
  SPCCL_CUDA_OR_DIE(
      cudaMemcpyAsync(static_cast<char*>(data_) + offset, host, bytes, cudaMemcpyDefault, stream));
  SPCCL_CUDA_OR_DIE(cudaStreamSynchronize(stream));
}

std::vector<unsigned char> KindBuffer::download(cudaStream_t stream) const {
  std::vector<unsigned char> out(bytes_);
  if (bytes_ == 0) return out;
  if (kind_ == MemoryKind::Host) {
    if (stream != nullptr) SPCCL_CUDA_OR_DIE(cudaStreamSynchronize(stream));
    std::memcpy(out.data(), data_, bytes_);
    return out;
  }
  cudaStream_t own = nullptr;
  if (stream == nullptr) SPCCL_CUDA_OR_DIE(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  cudaStream_t used = stream != nullptr ? stream : own;
  SPCCL_CUDA_OR_DIE(cudaMemcpyAsync(out.data(), data_, bytes_, cudaMemcpyDefault, used));
  SPCCL_CUDA_OR_DIE(cudaStreamSynchronize(used));
  if (own != nullptr) SPCCL_CUDA_OR_DIE(cudaStreamDestroy(own));
  return out;
}

}  // namespace spccl::gpu_test

// CUDA-event timing for device_kernels_bench and one table row: a kernel's
// time against a device-to-device copy of the same bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

namespace spccl::perf::device_kernels {

struct Timing {
  int warmup;
  int iterations;
};

// The median over `iterations` runs of run(stream), after `warmup` runs,
// each timed by two events on the stream; milliseconds.
double medianMs(const std::function<void(cudaStream_t)>& run, const Timing& timing,
                cudaStream_t stream);

// Times a cudaMemcpyDeviceToDevice moving minBytes (minBytes / 2 copied)
// and prints the row: kernel, elements, case, bytes, time, GB/s, the
// copy's GB/s and the ratio. Called with the kernel's buffers freed.
void printRow(const char* kernel, uint64_t elements, const char* variant, uint64_t minBytes,
              double kernelMs, const Timing& timing, cudaStream_t stream);

void printHeader();

}  // namespace spccl::perf::device_kernels

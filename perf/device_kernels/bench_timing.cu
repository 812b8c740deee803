#include <algorithm>
#include <cstdio>
#include <vector>

#include "device_kernels/bench_timing.cuh"
#include "device_kernels/device_memory.cuh"

namespace spccl::perf::device_kernels {

double medianMs(const std::function<void(cudaStream_t)>& run, const Timing& timing,
                cudaStream_t stream) {
  for (int i = 0; i < timing.warmup; ++i) run(stream);
  checkCuda(cudaGetLastError(), "a warm-up launch");
  checkCuda(cudaStreamSynchronize(stream), "the warm-up runs");
  cudaEvent_t start = nullptr, stop = nullptr;
  checkCuda(cudaEventCreate(&start), "cudaEventCreate");
  checkCuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<float> times;
  for (int i = 0; i < std::max(timing.iterations, 1); ++i) {
    checkCuda(cudaEventRecord(start, stream), "cudaEventRecord");
    run(stream);
    checkCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    checkCuda(cudaEventSynchronize(stop), "a timed run");
    checkCuda(cudaGetLastError(), "a timed launch");
    float ms = 0;
    checkCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

void printHeader() {
  std::printf("%-22s %11s %-18s %11s %11s %9s %9s %7s\n", "# kernel", "elements", "case",
              "min_bytes", "median_us", "GB/s", "copy_GB/s", "ratio");
}

void printRow(const char* kernel, uint64_t elements, const char* variant, uint64_t minBytes,
              double kernelMs, const Timing& timing, cudaStream_t stream) {
  const uint64_t copyBytes = std::max<uint64_t>(minBytes / 2, 1);
  double copyMs = 0;
  {
    DeviceBuffer source(copyBytes), target(copyBytes);
    checkCuda(cudaMemsetAsync(source.as<void>(), 1, copyBytes, stream), "cudaMemset");
    copyMs = medianMs(
        [&](cudaStream_t s) {
          cudaMemcpyAsync(target.as<void>(), source.as<void>(), copyBytes, cudaMemcpyDeviceToDevice,
                          s);
        },
        timing, stream);
  }
  const double gbps = static_cast<double>(minBytes) / (kernelMs * 1e6);
  const double copyGbps = static_cast<double>(2 * copyBytes) / (copyMs * 1e6);
  std::printf("%-22s %11llu %-18s %11llu %11.1f %9.1f %9.1f %6.0f%%\n", kernel,
              static_cast<unsigned long long>(elements), variant,
              static_cast<unsigned long long>(minBytes), kernelMs * 1e3, gbps, copyGbps,
              100.0 * gbps / copyGbps);
  std::fflush(stdout);
}

}  // namespace spccl::perf::device_kernels

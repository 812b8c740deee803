// device_kernels_bench's table: each embedded kernel at each size, timed
// with CUDA events (the median of `iterations` runs after `warmup`), its
// achieved GB/s over the bytes it must move at least (reads + writes), and
// the ratio to a cudaMemcpyDeviceToDevice that moves as many bytes (half
// of them read, half written), timed the same way in the same run (issue
// 16's target: >= 80 % for the memory-bound kernels).
#pragma once

#include <cstdint>
#include <vector>

namespace spccl::perf::device_kernels {

struct BenchOptions {
  std::vector<uint64_t> sizes;  // f32 elements
  int warmup = 3;
  int iterations = 20;
};

void printBenchTable(const BenchOptions& options);

}  // namespace spccl::perf::device_kernels

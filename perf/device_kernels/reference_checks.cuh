// device_kernels_bench -c: each embedded kernel's output on a small, odd
// size (not a multiple of a tile, a code group or a block) against a host
// reference, bit for bit: the CPU's reduce and codecs (cpuKernels(), which
// the device paths must match, docs/gpu.md) and plain loops for the
// extraction, scatter and row moves.
#pragma once

namespace spccl::perf::device_kernels {

// Prints one line per check; returns the number that failed.
int runReferenceChecks();

}  // namespace spccl::perf::device_kernels

// SPCCL_HOST_DEVICE marks the element-level helpers (conversions, ops,
// quantizer formulas) that the CPU kernels and the CUDA kernels share, so
// that both compute every element with the same source and hence the same
// bits. Outside nvcc it is empty and changes nothing.
#pragma once

#if defined(__CUDACC__)
#define SPCCL_HOST_DEVICE __host__ __device__
#else
#define SPCCL_HOST_DEVICE
#endif

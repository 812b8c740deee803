// Inputs for the codec tests (test_gpu_quantize, test_cuda_logic_on_host):
// every block gets its own scale, and blocks single out the cases the
// encoding treats apart: all zeros, inf or NaN inside, a tiny (f32/bf16:
// subnormal) scale, values on the midpoints between levels (rounding ties).
#pragma once

#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "spccl.h"

namespace spccl::gpu_test {

// count elements of `type` (f32, f16 or bf16), blockSize to a block.
std::vector<unsigned char> codecInput(spcclDataType_t type, size_t count, size_t blockSize,
                                      int bits, std::mt19937_64& rng);
// Small normal values: residuals and accumulators.
std::vector<float> smallFloats(size_t count, std::mt19937_64& rng);

template <typename T>
std::vector<unsigned char> bytesOf(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace spccl::gpu_test

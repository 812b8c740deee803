// A multiply and a subtraction compiled with FMA instructions available
// (-mfma, tests/unit/CMakeLists.txt), in a file of its own so that nothing
// else runs those instructions on a CPU without them. The shape is the
// codecs' residual, v - m * level (kernels/cuda/quantize_groups.h).
#pragma once

namespace spccl::test {

float residualWithFmaAvailable(float v, float m, float level);

// Whether the probe was compiled with FMA instructions available (__FMA__).
bool probeHasFma();

}  // namespace spccl::test

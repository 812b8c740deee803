#include "fp_contract_probe.h"

namespace spccl::test {

// Fused into one vfnmadd unless the build forbids contraction.
__attribute__((noinline)) float residualWithFmaAvailable(float v, float m, float level) {
  return v - m * level;
}

bool probeHasFma() {
#ifdef __FMA__
  return true;
#else
  return false;
#endif
}

}  // namespace spccl::test
